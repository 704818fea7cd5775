"use strict";
const SUITS = ["oros", "copas", "espadas", "bastos"];
const RANKS = ["Sota", "Caballo", "Rey", "3", "As"];  // a card's corner
const RANK_NAMES = ["Sota", "Caballo", "Rey", "Tres", "As"];  // a card's name, the Spanish deck's in both languages
const CONTRACTS = ["pass", "solo", "cuatrola", "quintola"];  // the service's names of the bids
// Every string of the page, in English and Spanish. Cards keep the Spanish deck's names in both.
const STRINGS = {
  en: {
    seat_label: "Your seat", bots_label: "Bots", rules_label: "Rules", target_label: "Target", new_game: "New game",
    start: 'Press "New game" to start.', error: "Error: ",
    bids: { pass: "pass", solo: "solo", cuatrola: "cuatrola", quintola: "quintola" },
    levels: { master: "master", expert: "expert", strong: "strong", medium: "medium", easy: "easy",
              beginner: "beginner", heuristic: "heuristic", random: "random" },
    presets: { online: "online", traditional: "traditional" },
    you: "You", partner: (s) => `Partner (seat ${s})`, seat: (s) => `Seat ${s}`,
    dealer: "dealer", mano: "mano", declarer: "declarer", sits_out: "sits out", bid: "bid", tricks: "tricks",
    muestra: (trump, held) => `Muestra (trump ${trump})${held ? ", still in the dealer's hand" : ", played"}: `,
    last_trick: "Last trick: ",
    score: (a, b, t) => `Score: you ${a} – them ${b} (to ${t})`,
    bidding: "Bidding.", contract: (c, by) => `Contract: ${c}${by ? " by " + by : ""}.`,
    points: (a, b) => ` Points this hand: you ${a} – them ${b}.`, sung: (s) => ` Sung: ${s}.`,
    your_bid: " Your bid.", your_card: " Your card.",
    hand_over: (c, won, gp, a, b, sa, sb) => `Hand over (${c}): ${won ? "your team" : "they"} win ${gp} point` +
      `${gp === 1 ? "" : "s"}; card points ${a}–${b}; score ${sa}–${sb}`,
    match: (won, a, b) => `${won ? "You win the match" : "You lose the match"} ${a}–${b}`,
    last_hand: (c, won, gp) => `Last hand: ${c}, ${won ? "your team" : "they"} won ${gp}`,
  },
  es: {
    seat_label: "Tu asiento", bots_label: "Bots", rules_label: "Reglas", target_label: "Partida a", new_game: "Nueva partida",
    start: "Pulsa «Nueva partida» para empezar.", error: "Error: ",
    bids: { pass: "paso", solo: "solo", cuatrola: "cuatrola", quintola: "quintola" },
    levels: { master: "maestro", expert: "experto", strong: "fuerte", medium: "medio", easy: "fácil",
              beginner: "principiante", heuristic: "heurístico", random: "al azar" },
    presets: { online: "online", traditional: "tradicional" },
    you: "Tú", partner: (s) => `Compañero (asiento ${s})`, seat: (s) => `Asiento ${s}`,
    dealer: "reparte", mano: "mano", declarer: "juega", sits_out: "descansa", bid: "puja", tricks: "bazas",
    muestra: (trump, held) => `Muestra (triunfo: ${trump})${held ? ", aún en la mano del que reparte" : ", ya jugada"}: `,
    last_trick: "Última baza: ",
    score: (a, b, t) => `Marcador: nosotros ${a} – ellos ${b} (a ${t})`,
    bidding: "Subasta.", contract: (c, by) => `Contrato: ${c}${by ? " de " + by : ""}.`,
    points: (a, b) => ` Puntos de esta mano: nosotros ${a} – ellos ${b}.`, sung: (s) => ` Cantes: ${s}.`,
    your_bid: " Te toca pujar.", your_card: " Te toca jugar.",
    hand_over: (c, won, gp, a, b, sa, sb) => `Fin de la mano (${c}): ${won ? "ganamos" : "ganan ellos"} ${gp} punto` +
      `${gp === 1 ? "" : "s"}; puntos de cartas ${a}–${b}; marcador ${sa}–${sb}`,
    match: (won, a, b) => `${won ? "Ganamos la partida" : "Perdemos la partida"} ${a}–${b}`,
    last_hand: (c, won, gp) => `Última mano: ${c}, ${won ? "ganamos" : "ganaron ellos"} ${gp}`,
  },
};
let lang = localStorage.getItem("lang") || ((navigator.language || "en").toLowerCase().startsWith("es") ? "es" : "en");
const T = () => STRINGS[lang];
const bidName = (b) => T().bids[b] || b;
const ICON = {  // Spanish suits, drawn simply
  oros: '<svg viewBox="0 0 40 40"><circle cx="20" cy="20" r="15" fill="#e6b422" stroke="#8a6500" stroke-width="3"/><circle cx="20" cy="20" r="6" fill="none" stroke="#8a6500" stroke-width="2"/></svg>',
  copas: '<svg viewBox="0 0 40 40"><path d="M8 6h24c0 12-6 17-12 17S8 18 8 6z" fill="#c0392b"/><rect x="18" y="22" width="4" height="9" fill="#c0392b"/><rect x="11" y="31" width="18" height="4" rx="2" fill="#c0392b"/></svg>',
  espadas: '<svg viewBox="0 0 40 40"><path d="M20 2l4 6v22h-8V8z" fill="#2c5aa0"/><rect x="10" y="29" width="20" height="3" fill="#555"/><rect x="18" y="32" width="4" height="7" fill="#7a4a1e"/></svg>',
  bastos: '<svg viewBox="0 0 40 40"><path d="M15 36l-3-30c0-3 9-4 10-1l6 30c0 3-12 4-13 1z" fill="#3f8f3f" stroke="#1f5f1f" stroke-width="2"/><circle cx="17" cy="12" r="2" fill="#1f5f1f"/><circle cx="20" cy="22" r="2" fill="#1f5f1f"/></svg>',
};
let game = null;
let eventLog = [];  // every event of this game so far, to write the log again in another language
const $ = (id) => document.getElementById(id);
const suitOf = (c) => SUITS[Math.floor(c / 5)];
const cardName = (c) => `${RANK_NAMES[c % 5]} de ${suitOf(c)}`;
const actionName = (a) => (a < 20 ? cardName(a) : bidName(CONTRACTS[a - 20]));

function cardEl(c, opts = {}) {
  const d = document.createElement("div");
  d.className = "card" + (opts.legal ? " legal" : "") + (opts.dim ? " dim" : "");
  d.dataset.card = c;
  d.title = cardName(c);
  d.innerHTML = `<span>${RANKS[c % 5]}</span>${ICON[suitOf(c)]}<span class="small">${suitOf(c)}</span>`;
  if (opts.legal) { d.dataset.action = c; d.addEventListener("click", () => act(c)); }
  return d;
}
function backEl() { const d = document.createElement("div"); d.className = "card back"; return d; }

async function api(method, path, body) {
  const r = await fetch(path, { method, headers: { "content-type": "application/json" },
                                body: body === undefined ? undefined : JSON.stringify(body) });
  const data = await r.json();
  if (!r.ok) throw new Error(typeof data.detail === "string" ? data.detail : JSON.stringify(data.detail));
  return data;
}
async function newGame() {
  const level = $("level").value;
  try {
    game = await api("POST", "/v1/games", { seat: +$("seat").value, bots: [level, level, level],
                                            rules: $("rules").value, target: +$("target").value });
    $("log").innerHTML = "";
    eventLog = [];
    render();
  } catch (e) { $("status").textContent = T().error + e.message; }
}
async function act(a) {
  if (!game || !game.legal.includes(a)) return;
  try { game = await api("POST", `/v1/games/${game.id}/act`, { action: a }); render(); }
  catch (e) { $("status").textContent = T().error + e.message; }
}
function who(s) { return s === game.seat ? T().you : s === (game.seat + 2) % 4 ? T().partner(s) : T().seat(s); }

function applyLang() {  // the page's fixed strings, the levels' names, and the game drawn again
  document.documentElement.lang = lang;
  $("lang").value = lang;
  for (const el of document.querySelectorAll("[data-i18n]")) {
    if (el.id !== "status" || !game) el.textContent = T()[el.dataset.i18n];
  }
  for (const o of $("level").options) o.textContent = T().levels[o.value];
  for (const o of $("rules").options) o.textContent = T().presets[o.value];
  if (game) { $("log").innerHTML = ""; render(true); }
}

function render(relog = false) {
  const g = game, me = g.seat, t = T();
  const pos = { [me]: "bottom", [(me + 1) % 4]: "left", [(me + 2) % 4]: "top", [(me + 3) % 4]: "right" };
  for (let s = 0; s < 4; s++) {
    const el = $("seat-" + pos[s]);
    el.className = "seat" + (g.to_act === s ? " to-act" : "");
    const tags = [s === g.dealer ? t.dealer : "", s === g.mano ? t.mano : "", s === g.declarer ? t.declarer : "",
                  s === g.sitter ? t.sits_out : ""].filter(Boolean).join(", ");
    const bid = g.bids[s] === null ? "" : ` · ${t.bid}: ${bidName(g.bids[s])}`;
    el.innerHTML = `<div><b>${who(s)}</b> <span class="small">${tags}${bid} · ${t.tricks} ${g.tricks_won[s]}</span></div>`;
    const cards = document.createElement("div");
    if (s === me) {
      for (const c of g.hand) cards.appendChild(cardEl(c, { legal: g.legal.includes(c), dim: g.legal.length > 0 && !g.legal.includes(c) }));
    } else {
      for (let i = 0; i < g.cards_left[s]; i++) cards.appendChild(backEl());
    }
    el.appendChild(cards);
  }
  const m = $("muestra"); m.innerHTML = "";
  m.append(t.muestra(g.trump, g.muestra_held), cardEl(g.muestra, { dim: !g.muestra_held }));
  const trick = $("trick"); trick.innerHTML = "";
  for (const [s, c] of g.trick) { const w = document.createElement("div"); w.className = "small";
    w.append(cardEl(c), document.createElement("br"), who(s)); trick.appendChild(w); }
  $("lasttrick").textContent = g.last_trick.length ? t.last_trick + g.last_trick.map(([s, c]) => `${who(s)} ${cardName(c)}`).join(", ") : "";
  const bids = $("bids"); bids.innerHTML = "";
  for (const a of g.legal.filter((a) => a >= 20)) {
    const b = document.createElement("button"); b.className = "bid-button"; b.dataset.action = a;
    b.textContent = actionName(a); b.addEventListener("click", () => act(a)); bids.appendChild(b);
  }
  const mine = me % 2, theirs = 1 - mine;
  $("score").textContent = t.score(g.score[mine], g.score[theirs], g.target);
  let status = g.contract === null ? t.bidding : t.contract(bidName(g.contract), g.declarer === null ? "" : who(g.declarer));
  status += t.points(g.points[mine], g.points[theirs]);
  if (g.sung.length) status += t.sung(g.sung.join(", "));
  if (g.phase === "bidding" && g.to_act === me) status += t.your_bid;
  else if (g.to_act === me) status += t.your_card;
  $("status").textContent = status;
  if (!relog) eventLog = eventLog.concat(g.events);
  for (const e of relog ? eventLog : g.events) {  // after a change of language: the whole log again
    const line = document.createElement("div");
    if (e.hand_over) {
      const r = e.hand_over;
      line.textContent = t.hand_over(bidName(r.contract), r.winner_team === mine, r.game_points, r.points[mine],
                                     r.points[theirs], r.score_after[mine], r.score_after[theirs]);
      line.className = "hand-over";
    } else line.textContent = `${who(e.seat)}: ${actionName(e.action)}`;
    $("log").prepend(line);
  }
  const last = g.last_result;
  $("result").textContent = g.match_over ? t.match(last.winner_team === mine, g.score[mine], g.score[theirs])
    : (last ? t.last_hand(bidName(last.contract), last.winner_team === mine, last.game_points) : "");
  $("result").dataset.over = g.match_over ? "1" : "0";
}
$("new-game").addEventListener("click", newGame);
$("lang").addEventListener("change", () => { lang = $("lang").value; localStorage.setItem("lang", lang); applyLang(); });
applyLang();
