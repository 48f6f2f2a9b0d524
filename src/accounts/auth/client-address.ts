import { isIPv4, isIPv6 } from 'node:net';

/**
 * The client a request is counted as: an IPv4 address as it is, an IPv6 address by its /64 (one
 * subscriber usually holds a whole /64, so counting single addresses would let it spray 2^64 of
 * them), an IPv4-mapped IPv6 address as its IPv4 address.
 */
export function clientKey(address: string | undefined): string {
  if (address === undefined) return 'unknown';
  const ip = address.replace(/%.*$/, ''); // a zone id names the interface, not the client
  if (isIPv4(ip)) return ip;
  if (!isIPv6(ip)) return 'unknown';
  const groups = ipv6Groups(ip);
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return `${groups[6]! >> 8}.${groups[6]! & 0xff}.${groups[7]! >> 8}.${groups[7]! & 0xff}`;
  }
  return `${groups
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(':')}::/64`;
}

/** The eight 16-bit groups of a valid IPv6 address (with `::` expanded, a trailing IPv4 part converted). */
function ipv6Groups(ip: string): number[] {
  const parts = (text: string): number[] =>
    text === ''
      ? []
      : text.split(':').flatMap((part) => {
          if (!part.includes('.')) return [parseInt(part, 16)];
          const [a = 0, b = 0, c = 0, d = 0] = part.split('.').map(Number);
          return [(a << 8) | b, (c << 8) | d];
        });
  const [head = '', tail] = ip.split('::');
  const first = parts(head);
  if (tail === undefined) return first;
  const last = parts(tail);
  return [...first, ...Array<number>(8 - first.length - last.length).fill(0), ...last];
}
