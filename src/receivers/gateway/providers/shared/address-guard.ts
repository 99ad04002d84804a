// Keeps image fetches away from the gateway's own network: private, loopback,
// link-local, CGNAT, multicast and reserved addresses are refused, and so is
// every address of the host's own interfaces (a public one reaches the
// gateway's and admin's listeners bound to every interface). The check runs
// inside the connection's DNS lookup, on the address actually dialled, so a
// name that resolves differently the second time (DNS rebinding) is caught.
import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions, type LookupOptions } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import { networkInterfaces } from 'node:os';

const blocked = new BlockList();
const BLOCKED_IPV4 = [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const;
for (const [network, prefix] of BLOCKED_IPV4) {
  blocked.addSubnet(network, prefix, 'ipv4');
  // 6to4 (2002::/16) carries an IPv4 address in its next 32 bits, and a relay reaches that host.
  blocked.addSubnet(`2002:${sixToFourGroups(network)}::`, 16 + prefix, 'ipv6');
}
// Unspecified, loopback and IPv4-compatible (::/96); discard-only; NAT64,
// well-known and local-use (64:ff9b:1::/48); Teredo; documentation;
// site-local (fec0::/10, deprecated but still routed by some networks);
// unique-local; link-local; multicast.
for (const [network, prefix] of [
  ['::', 96], ['100::', 64], ['64:ff9b::', 96], ['64:ff9b:1::', 48], ['2001::', 32], ['2001:db8::', 32],
  ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8],
] as const) {
  blocked.addSubnet(network, prefix, 'ipv6');
}

/** An IPv4 address as the two 16-bit groups 6to4 writes it in (`10.0.0.1`: `a00:1`). */
function sixToFourGroups(ipv4: string): string {
  const [a = 0, b = 0, c = 0, d = 0] = ipv4.split('.').map(Number);
  return `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
}

export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return !blocked.check(address, 'ipv4') && !isOwnAddress(address);
  if (family !== 6) return false;
  // IPv4-mapped IPv6 (::ffff:10.0.0.1) reaches the IPv4 host: judge that one.
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped?.[1] !== undefined) return isPublicAddress(mapped[1]);
  return !blocked.check(address, 'ipv6') && !isOwnAddress(address);
}

/** Whether one of the host's interfaces has this address (read each time: addresses come and go). */
function isOwnAddress(address: string): boolean {
  const own = new BlockList();
  for (const entries of Object.values(networkInterfaces())) {
    for (const entry of entries ?? []) own.addAddress(entry.address.replace(/%.*$/, ''), entry.family === 'IPv6' ? 'ipv6' : 'ipv4');
  }
  return own.check(address, isIP(address) === 6 ? 'ipv6' : 'ipv4');
}

export class BlockedAddressError extends Error {
  readonly code = 'SLUICE_ERR_BLOCKED_ADDRESS';
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** A `lookup` for net.connect that fails when any resolved address is not public. */
export function guardedLookup(hostname: string, options: LookupOptions, callback: LookupCallback): void {
  const all: LookupAllOptions = { ...options, all: true };
  dnsLookup(hostname, all, (err, addresses) => {
    if (err !== null) return callback(err, []);
    // Which address is not said: the message reaches the client, and what this
    // resolver answers for internal names would map the gateway's network.
    if (!addresses.every((entry) => isPublicAddress(entry.address))) return callback(new BlockedAddressError(`${hostname} resolves to a non-public address`), []);
    if (options.all === true) return callback(null, addresses);
    const first = addresses[0];
    if (first === undefined) return callback(new BlockedAddressError(`${hostname} has no address`), []);
    callback(null, first.address, first.family);
  });
}
