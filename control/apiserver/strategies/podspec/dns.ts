/**
 * A PodSpec's dnsConfig (Kubernetes' pkg/apis/core/validation validatePodDNSConfig), with
 * the limits of libc's resolver the kubelet also cuts to (agent/kubelet/pods/dns.ts).
 */
import { isIP } from 'node:net';
import type { FieldError } from '../../../../api/meta/validation.js';
import { childPath, indexPath, invalid, required } from '../../../../api/meta/validation.js';
import { eachObj, isObj, list, str } from '../meta.js';
import type { Obj } from '../meta.js';
import { dnsSubdomain } from './fields.js';

/** validation.MaxDNSNameservers. */
export const MAX_DNS_NAMESERVERS = 3;
/** validation.MaxDNSSearchPaths. */
export const MAX_DNS_SEARCH_PATHS = 32;
/** validation.MaxDNSSearchListChars (the search line, spaces included). */
export const MAX_DNS_SEARCH_LIST_CHARS = 2048;

/**
 * validatePodDNSConfig at `path` (`spec.dnsConfig`): with dnsPolicy None a dnsConfig with at
 * least one nameserver is required; at most 3 nameservers, each an IP address; at most 32
 * searches and 2048 characters in all, each a DNS subdomain (a trailing dot allowed); each
 * option has a name.
 */
export function validatePodDNSConfig(dnsConfig: unknown, dnsPolicy: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const nameserversPath = childPath(path, 'nameservers');
  if (dnsPolicy === 'None') {
    if (!isObj(dnsConfig)) return [required(path, 'must provide `dnsConfig` when `dnsPolicy` is None')];
    if (list(dnsConfig.nameservers).length === 0)
      return [required(nameserversPath, 'must provide at least one DNS nameserver when `dnsPolicy` is None')];
  }
  if (!isObj(dnsConfig)) return errs;
  const cfg: Obj = dnsConfig;
  const nameservers = list(cfg.nameservers);
  if (nameservers.length > MAX_DNS_NAMESERVERS)
    errs.push(
      invalid(nameserversPath, nameservers, `must not have more than ${MAX_DNS_NAMESERVERS} nameservers`),
    );
  nameservers.forEach((ns, i) => {
    if (typeof ns !== 'string' || isIP(ns) === 0)
      errs.push(
        invalid(
          indexPath(nameserversPath, i),
          ns,
          'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)',
        ),
      );
  });
  const searchesPath = childPath(path, 'searches');
  const searches = list(cfg.searches);
  if (searches.length > MAX_DNS_SEARCH_PATHS)
    errs.push(
      invalid(searchesPath, searches, `must not have more than ${MAX_DNS_SEARCH_PATHS} search paths`),
    );
  if (searches.map((s) => str(s)).join(' ').length > MAX_DNS_SEARCH_LIST_CHARS)
    errs.push(
      invalid(
        searchesPath,
        searches,
        `must not have more than ${MAX_DNS_SEARCH_LIST_CHARS} characters (including spaces) in the search list`,
      ),
    );
  searches.forEach((s, i) =>
    errs.push(...dnsSubdomain(str(s).replace(/\.$/, ''), indexPath(searchesPath, i))),
  );
  eachObj(cfg.options, (o, i) => {
    if (str(o.name) === '')
      errs.push(required(indexPath(childPath(path, 'options'), i), 'must not be empty'));
  });
  return errs;
}
