# The step runner of the benchmark scripts (sourced by them): each step writes one file and is
# skipped when that file is there, so a script goes on after a stop with the same command.

run() {  # run FILE COMMAND...: the command, unless FILE is already there
  local file=$1; shift
  [ -f "$file" ] && return 0
  echo "$(date +%H:%M) $*" >&2
  "$@"
}
