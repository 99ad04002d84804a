// Joining and signing a delivery body in slices: the same bytes and the same
// signature as doing it at once, with turns of the event loop in between.
import { createHmac, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { concatSliced, signSliced } from '../../../src/exporters/otlphttp/body-sliced.js';
import { turnsDuring } from '../../helpers/turns.js';

describe('delivery bodies in slices', () => {
  const records = [randomBytes(150_000), randomBytes(10), randomBytes(70_000)];

  it('joins records into the bytes Buffer.concat makes, yielding between pieces', async () => {
    // A zero-length slice yields after every 64 KiB piece: 3 + 1 + 2 of them.
    const { value, turns } = await turnsDuring(() => concatSliced(records, 0));
    expect(Buffer.from(value).equals(Buffer.concat(records))).toBe(true);
    expect(turns).toBeGreaterThanOrEqual(5);
  });

  it('hands back a lone record as it is', async () => {
    const [only] = records;
    expect(await concatSliced([only as Buffer], 0)).toBe(only);
  });

  it('signs with the HMAC-SHA256 of the whole body, yielding between pieces', async () => {
    const body = Buffer.concat(records);
    const { value, turns } = await turnsDuring(() => signSliced('s3cret', body, 0));
    expect(value).toBe(createHmac('sha256', 's3cret').update(body).digest('hex'));
    expect(turns).toBeGreaterThanOrEqual(3);
  });
});
