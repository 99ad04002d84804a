// Retry-After is either delta-seconds or an HTTP-date (RFC 9110 10.2.3):
// IMF-fixdate, or the obsolete RFC 850 and asctime forms. Anything else
// (`1.5`, which Date.parse would read as a date in 2001) is ignored.
const HTTP_DATE = [
  /^[A-Za-z]{3}, \d{2} [A-Za-z]{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/,
  /^[A-Za-z]{6,9}, \d{2}-[A-Za-z]{3}-\d{2} \d{2}:\d{2}:\d{2} GMT$/,
];
/** asctime names no zone, yet is GMT as every HTTP-date (RFC 9110 5.6.7): Date.parse alone would read it in local time. */
const ASCTIME = /^[A-Za-z]{3} [A-Za-z]{3} [ \d]\d \d{2}:\d{2}:\d{2} \d{4}$/;

export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const text = (Array.isArray(value) ? value[0] : value)?.trim();
  if (text === undefined || text === '') return undefined;
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const zoned = ASCTIME.test(text) ? `${text} GMT` : HTTP_DATE.some((form) => form.test(text)) ? text : undefined;
  if (zoned === undefined) return undefined;
  const date = Date.parse(zoned);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}
