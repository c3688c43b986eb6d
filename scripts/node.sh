#!/usr/bin/env bash
# Puts a given Node line first on PATH: the project runs on Node 24 (CI's full suite) and supports Node 22.
#
#   eval "$(scripts/node.sh 24)"     # or 22; an exact version (24.21.0) works too
#   . scripts/node.sh 24             # the same, sourced from bash
#
# Node's own binary and headers come from the npm registry's `node-linux-<arch>` package (so only npm's
# registry is needed), kept in ${XDG_CACHE_HOME:-~/.cache}/artifact-store/node-<major>
# and reused while it is the newest release of that line (or when the registry cannot be reached).
# It prints the `export` lines a shell needs: PATH with that Node's bin first, and npm_config_nodedir
# pointing at its headers so node-gyp compiles native modules (better-sqlite3) against them instead of
# downloading headers. The package has no npm: the npm already installed runs under this node.
# Progress goes to stderr; stdout carries only the shell lines.

_node_sh_quote() { printf "'%s'" "${1//\'/\'\\\'\'}"; }

_node_sh_main() {
  local want="${1:-}"
  if [[ ! "$want" =~ ^[0-9]+(\.[0-9]+\.[0-9]+)?$ ]]; then
    echo "usage: eval \"\$(scripts/node.sh MAJOR)\"   (MAJOR: 24 or 22, or an exact version such as 24.21.0)" >&2
    return 2
  fi
  local major="${want%%.*}" arch
  case "$(uname -m)" in
    x86_64 | amd64) arch=x64 ;;
    aarch64 | arm64) arch=arm64 ;;
    *) echo "scripts/node.sh: no node-linux package for $(uname -m)" >&2 && return 1 ;;
  esac
  [[ "$(uname -s)" == Linux ]] || { echo "scripts/node.sh: Linux only; elsewhere install Node $major with nvm or from nodejs.org" >&2 && return 1; }
  command -v npm >/dev/null || { echo "scripts/node.sh: needs npm (and a node to run it) to fetch Node $major" >&2 && return 1; }

  local pkg="node-linux-$arch"
  local cache="${XDG_CACHE_HOME:-$HOME/.cache}/artifact-store"
  local dir="$cache/node-$major"
  local have=""
  [[ -x "$dir/bin/node" ]] && have="$("$dir/bin/node" --version 2>/dev/null)" && have="${have#v}"

  # The newest release of the line (npm lists every matching version; a single match is a plain string).
  local version
  if ! version="$(npm view "$pkg@$want" version --json 2>/dev/null | tr -d '[]", ' | grep -v '^$' | sort -V | tail -n 1)" ||
    [[ -z "$version" ]]; then
    if [[ -n "$have" && ( "$want" == "$major" || "$want" == "$have" ) ]]; then
      echo "scripts/node.sh: the registry did not answer; using the cached Node $have" >&2
      version="$have"
    else
      echo "scripts/node.sh: cannot resolve $pkg@$want on the npm registry" >&2
      return 1
    fi
  fi

  if [[ "$have" != "$version" ]]; then
    echo "scripts/node.sh: fetching $pkg@$version into $dir" >&2
    mkdir -p "$cache" || return 1
    local tmp
    tmp="$(mktemp -d "$cache/.node-$major.XXXXXX")" || return 1
    if ! (cd "$tmp" && npm pack "$pkg@$version" --silent >/dev/null && tar -xzf "$pkg-$version.tgz" && rm -f "$pkg-$version.tgz"); then
      rm -rf "$tmp"
      echo "scripts/node.sh: npm pack $pkg@$version failed" >&2
      return 1
    fi
    rm -rf "$dir" && mv "$tmp/package" "$dir" && rm -rf "$tmp" || return 1
    if [[ "$("$dir/bin/node" --version)" != "v$version" || ! -f "$dir/include/node/node.h" ]]; then
      echo "scripts/node.sh: $dir does not hold Node $version with its headers" >&2
      return 1
    fi
  else
    echo "scripts/node.sh: Node $version (cached in $dir)" >&2
  fi

  # Drop the bin of a Node this script put on PATH before, then put this one first.
  local path="" entry entries
  IFS=':' read -r -a entries <<<"$PATH"
  for entry in "${entries[@]}"; do
    [[ "$entry" == "$cache"/node-*/bin ]] || path="${path:+$path:}$entry"
  done
  echo "export PATH=$(_node_sh_quote "$dir/bin${path:+:$path}")"
  echo "export npm_config_nodedir=$(_node_sh_quote "$dir")"
  echo "hash -r 2>/dev/null || true"
}

if [[ "${BASH_SOURCE[0]}" != "$0" ]]; then
  # Sourced: apply the lines to the calling shell, without leaving options or helpers behind.
  _node_sh_rc=0
  _node_sh_lines="$(set -euo pipefail && _node_sh_main "$@")" || _node_sh_rc=$?
  (( _node_sh_rc != 0 )) || eval "$_node_sh_lines"
  unset -f _node_sh_main _node_sh_quote
  unset _node_sh_lines
  return "$_node_sh_rc"
else
  set -euo pipefail
  _node_sh_main "$@"
fi
