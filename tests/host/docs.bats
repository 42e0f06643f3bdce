#!/usr/bin/env bats
# Documentation/: every reStructuredText file parses without a warning
# (a broken title, list or directive would otherwise show only when
# someone reads it), every image it names exists, and every file under Documentation/
# that README.md links to exists.

TOP=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)

# Prints docutils' warnings for each .rst file named, and the images it
# names that are missing; prints nothing if all is well.
rst_problems() {
	/usr/bin/python3 - "$@" <<'PY'
import io, os, sys
import docutils.core, docutils.nodes

for path in sys.argv[1:]:
    warnings = io.StringIO()
    tree = docutils.core.publish_doctree(
        open(path, encoding="utf-8").read(), source_path=path,
        settings_overrides={"warning_stream": warnings, "report_level": 2,
                            "halt_level": 5})
    for line in warnings.getvalue().splitlines():
        print(line)
    for img in tree.findall(docutils.nodes.image):
        uri = os.path.join(os.path.dirname(path), img["uri"])
        if not os.path.exists(uri):
            print(f"{path}: image {img['uri']} is missing")
PY
}

@test "docs: every .rst file parses without a warning and its images exist" {
	out=$(rst_problems "$TOP"/Documentation/*.rst 2>&1)
	[ -z "$out" ] || { echo "$out"; return 1; }
}

@test "docs: the checker sees a broken title and a missing image" {
	bad=$BATS_TEST_TMPDIR/bad.rst
	printf 'A title\n=====\n\nText.\n\n.. image:: nowhere.png\n' >"$bad"
	out=$(rst_problems "$bad" 2>&1)
	grep -q "Title underline too short" <<<"$out"
	grep -q "image nowhere.png is missing" <<<"$out"
}

@test "docs: every Documentation/ file README.md links to exists" {
	missing=""
	for f in $(grep -o '](Documentation/[^)]*)' "$TOP/README.md" | tr -d '()]' | sort -u); do
		[ -e "$TOP/$f" ] || missing="$missing $f"
	done
	[ -z "$missing" ] || { echo "missing:$missing"; return 1; }
}
