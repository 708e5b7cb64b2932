/**
 * Which IP addresses the platform may connect to on a caller's behalf. Only
 * addresses ipaddr.js classifies as global unicast pass; everything else
 * (loopback, private, link-local, CGNAT, multicast, unspecified, broadcast,
 * reserved, unique-local, NAT64, 6to4, Teredo, ...) is refused, checking an
 * IPv4-mapped IPv6 address as the IPv4 address it carries. The operator's
 * allow list (HEARTH_OUTBOUND_ALLOW) re-opens chosen ranges for development,
 * except the cloud metadata endpoints, which hand out credentials and are
 * never reachable.
 */
import dns from 'node:dns';
import net from 'node:net';
import ipaddr from 'ipaddr.js';
import { fail } from '../errors.ts';

type Address = ipaddr.IPv4 | ipaddr.IPv6;
export type AllowList = Array<[Address, number]>;

const METADATA = new Set(
  [
    '169.254.169.254', // AWS, GCP, Azure, DigitalOcean, OpenStack
    '169.254.170.2', // AWS ECS task credentials
    '100.100.100.200', // Alibaba Cloud
    '192.0.0.192', // Oracle Cloud (classic)
    'fd00:ec2::254', // AWS IPv6
  ].map((a) => ipaddr.parse(a).toNormalizedString()),
);

export function parseAllowList(entries: string[]): AllowList {
  return entries.map((entry) => {
    try {
      if (entry.includes('/')) return ipaddr.parseCIDR(entry);
      const address = ipaddr.parse(entry);
      return [address, address.kind() === 'ipv4' ? 32 : 128];
    } catch {
      throw fail(
        'invalid_config',
        `HEARTH_OUTBOUND_ALLOW entry "${entry}" is not an IP address or CIDR range; write it like 127.0.0.1/32 or ::1/128.`,
      );
    }
  });
}

function unmap(address: Address): Address {
  if (address instanceof ipaddr.IPv6 && address.isIPv4MappedAddress()) return address.toIPv4Address();
  return address;
}

/** IPv4-compatible IPv6 (::a.b.c.d, deprecated): routable nowhere legitimate. */
function isIPv4Compatible(address: Address): boolean {
  return address instanceof ipaddr.IPv6 && address.parts.slice(0, 6).every((p) => p === 0);
}

/**
 * A URL's host as the address checks see it (IPv6 brackets dropped) and, when
 * it is a literal address, why it is refused. A name is judged when it is
 * resolved, at dial time (guardedLookup).
 */
export function literalRefusal(url: URL, allow: AllowList): { host: string; reason: string | null } {
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  return { host, reason: net.isIP(host) ? refusalReason(host, allow) : null };
}

/**
 * A host as an http URL's parser reads it, so a bare host name (smtp_host)
 * written 2130706433 or 0x7f.1 is seen as the 127.0.0.1 the resolver would
 * make of it; IPv6 brackets dropped.
 */
function normalHost(host: string): string {
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  if (net.isIP(bare)) return bare;
  try {
    return new URL(`http://${host}`).hostname.replace(/^\[(.*)\]$/, '$1');
  } catch {
    return bare;
  }
}

/** Names of cloud metadata services: never reachable, whatever the allow list says. */
const METADATA_NAMES = new Set([
  'metadata.google.internal',
  'metadata.goog',
  'metadata',
  'instance-data',
  'instance-data.ec2.internal',
]);

/** The loopback address a name always stands for (RFC 6761 .localhost, Debian's ip6-* names), or null. */
function loopbackOf(name: string): string | null {
  if (name === 'localhost' || name.endsWith('.localhost')) return '127.0.0.1';
  if (name === 'ip6-localhost' || name === 'ip6-loopback') return '::1';
  return null;
}

/**
 * Why an outbound target cannot be saved, judged without the network (one
 * check for every place that stores one: cron webhooks, workflow webhook
 * steps, the log drain, social sign-in issuers, the SMTP host). Refused: a
 * literal address outside the allowed ranges in any notation the URL parser
 * reads (decimal 2130706433, octal 0177.0.0.1, hex 0x7f.1, IPv4-mapped
 * [::ffff:127.0.0.1], [::1], 0.0.0.0, ...), a loopback name (judged as the
 * address it stands for, so HEARTH_OUTBOUND_ALLOW can re-open it) and a
 * metadata service's name; a trailing dot changes nothing. Other names pass
 * here and are judged by what they resolve to at every delivery.
 * `host` is a URL's hostname or a bare host name.
 */
export function targetRefusal(host: string, allow: AllowList): string | null {
  const name = normalHost(host).toLowerCase().replace(/\.+$/, '');
  if (net.isIP(name)) return refusalReason(name, allow);
  if (METADATA_NAMES.has(name)) return 'a cloud metadata service';
  const loopback = loopbackOf(name);
  const reason = loopback ? refusalReason(loopback, allow) : null;
  return reason ? `a loopback name (it stands for ${loopback})` : null;
}

/**
 * What can be done about a refused target, to end its refusal message: a
 * server on this machine or network (a local SMTP server or identity provider
 * in development) is reached by listing its address in HEARTH_OUTBOUND_ALLOW,
 * which someone who only sees the refusal would not otherwise find. A cloud
 * metadata service stays closed whatever the list says, so its refusal says
 * that instead. `host` is the refused address, or a host name targetRefusal
 * refused.
 */
export function outboundAdvice(host: string): string {
  const name = normalHost(host).toLowerCase().replace(/\.+$/, '');
  // The only names targetRefusal refuses besides loopback names are metadata services'.
  const literal = net.isIP(name) ? name : loopbackOf(name);
  const address = literal ? unmap(ipaddr.parse(literal)) : null;
  if (!address || METADATA.has(address.toNormalizedString()))
    return 'cloud metadata services are never reachable, not even through HEARTH_OUTBOUND_ALLOW';
  const range = `${address.toString()}/${address.kind() === 'ipv4' ? 32 : 128}`;
  return `the platform connects only to public addresses. To use a server at this address (in development), start Hearth with HEARTH_OUTBOUND_ALLOW=${range} (see docs/configuration.md)`;
}

/** ipaddr.js's names of the special-purpose ranges, in the words (and ranges) a refusal shows. */
const RANGE_WORDS: Record<string, string> = {
  unspecified: 'an unspecified address (0.0.0.0/8, ::)',
  broadcast: 'a broadcast address (255.255.255.255)',
  multicast: 'a multicast address (224.0.0.0/4, ff00::/8)',
  linkLocal: 'a link-local address (169.254.0.0/16, fe80::/10)',
  loopback: 'a loopback address (127.0.0.0/8, ::1)',
  carrierGradeNat: 'a carrier-grade NAT address (100.64.0.0/10)',
  private: 'a private address (10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16)',
  reserved: 'a reserved or documentation address',
  as112: 'an AS112 DNS sink address',
  as112v6: 'an AS112 DNS sink address',
  amt: 'an AMT relay address',
  uniqueLocal: 'a unique-local IPv6 address (fc00::/7)',
  ipv4Mapped: 'an IPv4-mapped IPv6 address',
  deprecatedSiteLocal: 'a site-local IPv6 address (fec0::/10)',
  discard: 'a discard-only IPv6 address (100::/64)',
  rfc6145: 'an IPv4-translated IPv6 address (::ffff:0:0:0/96)',
  rfc6052: 'a NAT64 address (64:ff9b::/96)',
  '6to4': 'a 6to4 address (2002::/16)',
  teredo: 'a Teredo address (2001::/32)',
  benchmarking: 'a benchmarking address (2001:2::/48)',
  deprecatedOrchid: 'an ORCHID address (2001:10::/28)',
  orchid2: 'an ORCHIDv2 address (2001:20::/28)',
  droneRemoteIdProtocolEntityTags: 'a drone remote ID address (2001:30::/28)',
  segmentRouting: 'a segment routing address (5f00::/16)',
};

/** Why a connection to this address is refused, or null when it is allowed. */
export function refusalReason(text: string, allow: AllowList): string | null {
  let address: Address;
  try {
    address = unmap(ipaddr.parse(text));
  } catch {
    return `"${text}" is not an IP address`;
  }
  if (METADATA.has(address.toNormalizedString())) return 'a cloud metadata address';
  if (allow.some(([range, bits]) => range.kind() === address.kind() && address.match(range, bits))) return null;
  const range = address.range();
  // A range a later ipaddr.js adds is still refused, under a general name.
  if (range !== 'unicast') return RANGE_WORDS[range] ?? 'a special-purpose address (not global unicast)';
  return isIPv4Compatible(address) ? 'an IPv4-compatible IPv6 address' : null;
}

/**
 * A socket lookup that checks every address a host name resolves to, so the
 * check happens at connect time and the socket connects to exactly the
 * address checked (a name rebound to 127.0.0.1 after a check fails here).
 * `refuse` builds the error the caller's area reports.
 */
export function guardedLookup(
  allow: AllowList,
  refuse: (hostname: string, address: string, reason: string) => Error,
): net.LookupFunction {
  return (hostname, options, callback) => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '');
      for (const { address } of addresses) {
        const reason = refusalReason(address, allow);
        if (reason) return callback(refuse(hostname, address, reason), '');
      }
      if (options.all) callback(null, addresses);
      else callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  };
}
