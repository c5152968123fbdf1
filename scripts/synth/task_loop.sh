# Sourced by the synthesizer's studies (synth_coverage.sh, synth_speed.sh): the bundled tasks they
# go over, one call each. Uses the caller's $here (the repository), $levels, $only (an extended
# regex over levelN/NAME, or empty), $shrink (1: sizes capped by synth_shrink.py) and $out.
#   each_task FUNCTION    calls FUNCTION NAME REFERENCE DIR for every task, in level and number
#                         order; DIR is the task's own folder under $out, REFERENCE the file to use
each_task() {
  local level ref name dir
  for level in $levels; do
    for ref in $(ls "$here/resources/tasks/level$level"/*.py | sort -V); do
      name=level$level/$(basename "$ref" .py)
      if [ -n "$only" ] && ! echo "$name" | grep -Eq "$only"; then continue; fi
      dir=$out/$name
      mkdir -p "$dir"
      if [ "$shrink" = 1 ]; then
        python3 "$here/scripts/synth/synth_shrink.py" "$ref" "$dir/$(basename "$ref")"
        ref=$dir/$(basename "$ref")
      fi
      "$1" "$name" "$ref" "$dir"
    done
  done
}
