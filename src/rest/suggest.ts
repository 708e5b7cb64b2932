/**
 * PostgREST's "Perhaps you meant ..." hints: the closest of a set of names,
 * scored as 1 - (edit distance / length of the longer name), the score its
 * fuzzy set ranks by. Names and functions need 0.75; parameter lists 0.33.
 */
import { distance } from 'fastest-levenshtein';

export function closest(candidates: Iterable<string>, wanted: string, minScore: number): string | null {
  let best: string | null = null;
  let bestScore = minScore;
  const w = wanted.toLowerCase();
  for (const c of candidates) {
    const longer = Math.max(c.length, w.length);
    const score = longer === 0 ? 1 : 1 - distance(c.toLowerCase(), w) / longer;
    if (score >= bestScore && (best === null || score > bestScore)) {
      best = c;
      bestScore = score;
    }
  }
  return best;
}
