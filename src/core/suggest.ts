/** Edit distance (insertions, deletions, substitutions), case-insensitive. */
function distance(a: string, b: string): number {
  const s = a.toLowerCase();
  const t = b.toLowerCase();
  let prev = Array.from({ length: t.length + 1 }, (_, j) => j);
  for (let i = 1; i <= s.length; i++) {
    const row = [i];
    for (let j = 1; j <= t.length; j++)
      row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (s[i - 1] === t[j - 1] ? 0 : 1));
    prev = row;
  }
  return prev[t.length]!;
}

/** The known name closest to `word`, when it is close enough to be a likely typo of it. */
export function closestName(word: string, known: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestDistance = Math.max(2, Math.floor(word.length / 3)) + 1;
  const lower = word.toLowerCase();
  for (const name of known) {
    // A name cut short or with a word too many (MAX_TTL for MAX_TTL_SECONDS) is as good as a typo.
    const other = name.toLowerCase();
    const d = other.startsWith(lower) || lower.startsWith(other) ? 1 : distance(word, name);
    if (d < bestDistance) [best, bestDistance] = [name, d];
  }
  return best;
}

/** " Did you mean X?" when one is close, else "". */
export function didYouMean(word: string, known: Iterable<string>): string {
  const name = closestName(word, known);
  return name ? ` Did you mean ${JSON.stringify(name)}?` : '';
}
