// Keeps image fetches away from the gateway's own network: private, loopback,
// link-local, CGNAT, multicast and reserved addresses are refused. The check
// runs inside the connection's DNS lookup, on the address actually dialled, so
// a name that resolves differently the second time (DNS rebinding) is caught.
import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions, type LookupOptions } from 'node:dns';
import { BlockList, isIP } from 'node:net';

const blocked = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) blocked.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8], ['64:ff9b::', 96]] as const) {
  blocked.addSubnet(network, prefix, 'ipv6');
}

export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return !blocked.check(address, 'ipv4');
  if (family !== 6) return false;
  // IPv4-mapped IPv6 (::ffff:10.0.0.1) reaches the IPv4 host: judge that one.
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped?.[1] !== undefined) return isPublicAddress(mapped[1]);
  return !blocked.check(address, 'ipv6');
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
