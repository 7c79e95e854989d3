#!/usr/bin/env bash
# Prints the home of a JDK >= 22 (java.lang.foreign is final from 22 on) for
# bindings/java: $JAVA_HOME if it is one, else the newest such JDK under
# /usr/lib/jvm (Temurin's and Debian's packages install there). Fails with a
# message saying what it looked at when there is none.
set -u
min=22

major() { # JAVA_VERSION="25.0.3" in $1/release -> 25 ("1.8.0" -> 1)
  [ -f "$1/release" ] && [ -x "$1/bin/java" ] || return 1
  sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$1/release"
}

if [ -n "${JAVA_HOME:-}" ]; then
  m=$(major "$JAVA_HOME")
  if [ -n "$m" ] && [ "$m" -ge $min ]; then echo "$JAVA_HOME"; exit 0; fi
  echo "find-jdk: JAVA_HOME=$JAVA_HOME is not a JDK >= $min (java ${m:-?}); looking in /usr/lib/jvm" >&2
fi
best= bestm=0
for d in /usr/lib/jvm/*/; do
  d=${d%/}
  [ -L "$d" ] && continue
  m=$(major "$d") || continue
  [ -n "$m" ] || continue
  if [ "$m" -ge $min ] && [ "$m" -gt $bestm ]; then best=$d bestm=$m; fi
done
if [ -n "$best" ]; then echo "$best"; exit 0; fi
echo "find-jdk: no JDK >= $min in JAVA_HOME or /usr/lib/jvm: install one (e.g. Temurin 25) and set JAVA_HOME" >&2
exit 1
