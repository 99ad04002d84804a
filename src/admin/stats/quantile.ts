// A quantile from cumulative histogram buckets, interpolated within the bucket
// it falls in, as Prometheus's histogram_quantile() does.
import type { Series } from './snapshot.js';

/** `buckets` are the `_bucket` series of one histogram child (cumulative, `le` labelled). */
export function histogramQuantile(q: number, buckets: readonly Series[]): number | null {
  const sorted = buckets
    .map((bucket) => ({ le: bucket.labels['le'] === '+Inf' ? Number.POSITIVE_INFINITY : Number(bucket.labels['le']), count: bucket.value }))
    .filter((bucket) => !Number.isNaN(bucket.le))
    .sort((a, b) => a.le - b.le);
  const count = sorted.at(-1)?.count ?? 0;
  if (count <= 0) return null;
  const rank = q * count;
  let lowerBound = 0;
  let lowerCount = 0;
  for (const bucket of sorted) {
    if (bucket.count >= rank) {
      // Above the highest finite bound nothing is known but that bound.
      if (bucket.le === Number.POSITIVE_INFINITY) return lowerBound;
      const inBucket = bucket.count - lowerCount;
      return inBucket <= 0 ? bucket.le : lowerBound + ((bucket.le - lowerBound) * (rank - lowerCount)) / inBucket;
    }
    lowerBound = bucket.le;
    lowerCount = bucket.count;
  }
  return lowerBound;
}
