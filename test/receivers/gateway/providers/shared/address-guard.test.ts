// Which addresses image fetches may dial: public ones only, judged by the
// IPv4 host an IPv6 form reaches, and never the host's own.
import { networkInterfaces } from 'node:os';
import { describe, expect, it } from 'vitest';
import { isPublicAddress } from '../../../../../src/receivers/gateway/providers/shared/address-guard.js';

describe('image fetch address guard', () => {
  it.each([
    ['64:ff9b:1::a00:1', 'NAT64 local-use'],
    ['fec0::1', 'site-local'],
    ['::a00:1', 'IPv4-compatible 10.0.0.1'],
    ['2002:a00:1::1', '6to4 of 10.0.0.1'],
    ['2002:7f00:1::', '6to4 of 127.0.0.1'],
    ['2002:a00::1', '6to4 of 10.0.0.0, compressed'],
    ['2002::1', '6to4 of 0.0.0.0'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'Teredo'],
    ['100::1', 'discard-only'],
    ['::ffff:192.168.1.1', 'IPv4-mapped private'],
    ['fd00::1', 'unique-local'],
    ['10.1.2.3', 'private IPv4'],
  ])('refuses %s (%s)', (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });

  it.each([['8.8.8.8'], ['2606:4700:4700::1111'], ['2002:808:808::1'], ['::ffff:8.8.8.8']])('lets %s through', (address) => {
    expect(isPublicAddress(address)).toBe(true);
  });

  const own = Object.values(networkInterfaces())
    .flatMap((entries) => entries ?? [])
    .filter((entry) => !entry.internal && !entry.address.startsWith('fe80:'));
  it.runIf(own.length > 0)("refuses the host's own interface addresses, public or not", () => {
    for (const entry of own) expect(isPublicAddress(entry.address), entry.address).toBe(false);
  });
});
