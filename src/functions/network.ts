/**
 * Which addresses a function may connect to. workerd's `public` class already
 * refuses loopback, private, link-local (so 169.254.169.254) and CGNAT space,
 * and it checks the address a name resolved to at connect time, so a DNS name
 * pointing at 127.0.0.1 is refused too. We add every non-unicast range that
 * ipaddr.js knows (the list the outbound client refuses) and this host's own
 * interface addresses, so a function cannot reach the database through the
 * machine's public address either.
 */
import os from 'node:os';
import ipaddr from 'ipaddr.js';

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

function specialRanges(): Range[] {
  const out: Range[] = [];
  // The tables behind ipaddr's range(); not in its type definitions.
  const tables = [ipaddr.IPv4.prototype, ipaddr.IPv6.prototype] as unknown as {
    SpecialRanges: Record<string, unknown>;
  }[];
  for (const { SpecialRanges: table } of tables) {
    for (const value of Object.values(table)) {
      const list = (Array.isArray((value as unknown[])[0]) ? value : [value]) as Range[];
      out.push(...list);
    }
  }
  return out;
}

function hostAddresses(): Range[] {
  return Object.values(os.networkInterfaces())
    .flat()
    .filter((i): i is os.NetworkInterfaceInfo => Boolean(i))
    .map((i) => {
      const a = ipaddr.parse(i.address.split('%')[0]);
      return [a, a.kind() === 'ipv4' ? 32 : 128] as Range;
    });
}

function overlaps(a: Range, b: Range): boolean {
  if (a[0].kind() !== b[0].kind()) return false;
  return a[1] <= b[1] ? b[0].match(a) : a[0].match(b);
}

export interface NetworkPolicy {
  allow: string[];
  deny: string[];
}

/**
 * `outboundAllow` (config HEARTH_OUTBOUND_ALLOW, used by tests) lists CIDRs a
 * function may reach anyway; deny ranges that overlap one are left out,
 * because workerd lets `deny` win over `allow`.
 */
export function functionNetworkPolicy(outboundAllow: string[]): NetworkPolicy {
  const allowed = outboundAllow.map(
    (c) =>
      (c.includes('/')
        ? ipaddr.parseCIDR(c)
        : ipaddr.parseCIDR(`${c}/${ipaddr.parse(c).kind() === 'ipv4' ? 32 : 128}`)) as Range,
  );
  const deny = [...specialRanges(), ...hostAddresses()]
    .filter((r) => !allowed.some((a) => overlaps(a, r)))
    .map(([a, bits]) => `${a.toString()}/${bits}`);
  return { allow: ['public', ...allowed.map(([a, bits]) => `${a.toString()}/${bits}`)], deny: [...new Set(deny)] };
}
