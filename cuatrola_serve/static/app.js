"use strict";
const SUITS = ["oros", "copas", "espadas", "bastos"];
const RANKS = ["Sota", "Caballo", "Rey", "3", "As"];
const BIDS = ["pass", "solo", "cuatrola", "quintola"];
const ICON = {  // Spanish suits, drawn simply
  oros: '<svg viewBox="0 0 40 40"><circle cx="20" cy="20" r="15" fill="#e6b422" stroke="#8a6500" stroke-width="3"/><circle cx="20" cy="20" r="6" fill="none" stroke="#8a6500" stroke-width="2"/></svg>',
  copas: '<svg viewBox="0 0 40 40"><path d="M8 6h24c0 12-6 17-12 17S8 18 8 6z" fill="#c0392b"/><rect x="18" y="22" width="4" height="9" fill="#c0392b"/><rect x="11" y="31" width="18" height="4" rx="2" fill="#c0392b"/></svg>',
  espadas: '<svg viewBox="0 0 40 40"><path d="M20 2l4 6v22h-8V8z" fill="#2c5aa0"/><rect x="10" y="29" width="20" height="3" fill="#555"/><rect x="18" y="32" width="4" height="7" fill="#7a4a1e"/></svg>',
  bastos: '<svg viewBox="0 0 40 40"><path d="M15 36l-3-30c0-3 9-4 10-1l6 30c0 3-12 4-13 1z" fill="#3f8f3f" stroke="#1f5f1f" stroke-width="2"/><circle cx="17" cy="12" r="2" fill="#1f5f1f"/><circle cx="20" cy="22" r="2" fill="#1f5f1f"/></svg>',
};
let game = null;
const $ = (id) => document.getElementById(id);
const suitOf = (c) => SUITS[Math.floor(c / 5)];
const cardName = (c) => `${RANKS[c % 5]} de ${suitOf(c)}`;
const actionName = (a) => (a < 20 ? cardName(a) : BIDS[a - 20]);

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
    render();
  } catch (e) { $("status").textContent = "Error: " + e.message; }
}
async function act(a) {
  if (!game || !game.legal.includes(a)) return;
  try { game = await api("POST", `/v1/games/${game.id}/act`, { action: a }); render(); }
  catch (e) { $("status").textContent = "Error: " + e.message; }
}
function who(s) { return s === game.seat ? "You" : s === (game.seat + 2) % 4 ? `Partner (seat ${s})` : `Seat ${s}`; }

function render() {
  const g = game, me = g.seat;
  const pos = { [me]: "bottom", [(me + 1) % 4]: "left", [(me + 2) % 4]: "top", [(me + 3) % 4]: "right" };
  for (let s = 0; s < 4; s++) {
    const el = $("seat-" + pos[s]);
    el.className = "seat" + (g.to_act === s ? " to-act" : "");
    const tags = [s === g.dealer ? "dealer" : "", s === g.mano ? "mano" : "", s === g.declarer ? "declarer" : "",
                  s === g.sitter ? "sits out" : ""].filter(Boolean).join(", ");
    const bid = g.bids[s] === null ? "" : ` · bid: ${g.bids[s]}`;
    el.innerHTML = `<div><b>${who(s)}</b> <span class="small">${tags}${bid} · tricks ${g.tricks_won[s]}</span></div>`;
    const cards = document.createElement("div");
    if (s === me) {
      for (const c of g.hand) cards.appendChild(cardEl(c, { legal: g.legal.includes(c), dim: g.legal.length > 0 && !g.legal.includes(c) }));
    } else {
      for (let i = 0; i < g.cards_left[s]; i++) cards.appendChild(backEl());
    }
    el.appendChild(cards);
  }
  const m = $("muestra"); m.innerHTML = "";
  m.append(`Muestra (trump ${g.trump})${g.muestra_held ? ", still in the dealer's hand" : ", played"}: `,
           cardEl(g.muestra, { dim: !g.muestra_held }));
  const trick = $("trick"); trick.innerHTML = "";
  for (const [s, c] of g.trick) { const w = document.createElement("div"); w.className = "small";
    w.append(cardEl(c), document.createElement("br"), who(s)); trick.appendChild(w); }
  $("lasttrick").textContent = g.last_trick.length ? "Last trick: " + g.last_trick.map(([s, c]) => `${who(s)} ${cardName(c)}`).join(", ") : "";
  const bids = $("bids"); bids.innerHTML = "";
  for (const a of g.legal.filter((a) => a >= 20)) {
    const b = document.createElement("button"); b.className = "bid-button"; b.dataset.action = a;
    b.textContent = BIDS[a - 20]; b.addEventListener("click", () => act(a)); bids.appendChild(b);
  }
  const mine = me % 2, theirs = 1 - mine;
  $("score").textContent = `Score: you ${g.score[mine]} – them ${g.score[theirs]} (to ${g.target})`;
  let status = g.contract === null ? "Bidding." : `Contract: ${g.contract}${g.declarer === null ? "" : " by " + who(g.declarer)}.`;
  status += ` Points this hand: you ${g.points[mine]} – them ${g.points[theirs]}.`;
  if (g.sung.length) status += ` Sung: ${g.sung.join(", ")}.`;
  if (g.phase === "bidding" && g.to_act === me) status += " Your bid.";
  else if (g.to_act === me) status += " Your card.";
  $("status").textContent = status;
  for (const e of g.events) {
    const line = document.createElement("div");
    if (e.hand_over) {
      const r = e.hand_over, won = r.winner_team === mine;
      line.textContent = `Hand over (${r.contract}): ${won ? "your team" : "they"} win ${r.game_points} point(s); ` +
        `card points ${r.points[mine]}–${r.points[theirs]}; score ${r.score_after[mine]}–${r.score_after[theirs]}`;
      line.className = "hand-over";
    } else line.textContent = `${who(e.seat)}: ${e.name}`;
    $("log").prepend(line);
  }
  $("result").textContent = g.match_over ? (g.last_result.winner_team === mine ? "You win the match " : "You lose the match ")
    + `${g.score[mine]}–${g.score[theirs]}` : (g.last_result ? `Last hand: ${g.last_result.contract}, ` +
    `${g.last_result.winner_team === mine ? "your team" : "they"} won ${g.last_result.game_points}` : "");
  $("result").dataset.over = g.match_over ? "1" : "0";
}
$("new-game").addEventListener("click", newGame);
