/**
 * Formatting shared by the table printers: ages, label sets, label selectors, container
 * lists and "a, b, c + N more..." lists — each as Kubernetes' printers
 * (pkg/printers/internalversion) render them, so `kubectl get` reads the same against
 * k8ts as against a real cluster.
 */

/**
 * A duration in milliseconds as Kubernetes' `duration.HumanDuration` writes it: about two
 * or three significant figures, the unit growing with the value.
 *
 *   < -1 s → `<invalid>` (clock skew of one second is tolerated as "now": `0s`)
 *   < 2 min → `Ns`;  < 10 min → `NmSs` (`Nm` on the minute);  < 3 h → `Nm`
 *   < 8 h → `NhMm` (`Nh`);  < 48 h → `Nh`;  < 8 d → `NdHh` (`Nd`);  < 2 y → `Nd`
 *   < 8 y → `NyDd` (`Ny`);  else `Ny`           (a year is 365 days; every unit truncates)
 */
export function humanDuration(ms: number): string {
  const seconds = Math.trunc(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.trunc(ms / 60_000);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.trunc(ms / 3_600_000);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;
  const days = Math.trunc(hours / 24);
  if (hours < 24 * 8) {
    const h = hours % 24;
    return h === 0 ? `${days}d` : `${days}d${h}h`;
  }
  if (hours < 24 * 365 * 2) return `${days}d`;
  const years = Math.trunc(days / 365);
  if (hours < 24 * 365 * 8) {
    const d = days % 365;
    return d === 0 ? `${years}y` : `${years}y${d}d`;
  }
  return `${years}y`;
}

/** Milliseconds since the epoch of an RFC 3339 timestamp; undefined when absent or unparsable. */
export function parseTime(ts: string | null | undefined): number | undefined {
  if (!ts) return undefined;
  const t = Date.parse(ts);
  return Number.isNaN(t) ? undefined : t;
}

/** The time elapsed from `ts` to `now` as humanDuration, or `<unknown>` when there is no time (an AGE cell). */
export function since(ts: string | null | undefined, now: Date): string {
  const t = parseTime(ts);
  return t === undefined ? '<unknown>' : humanDuration(now.getTime() - t);
}

/** A label set as `k1=v1,k2=v2` in key order, `<none>` when empty (labels.FormatLabels). */
export function formatLabels(labels: Record<string, string> | null | undefined): string {
  const keys = Object.keys(labels ?? {}).sort();
  if (keys.length === 0) return '<none>';
  return keys.map((k) => `${k}=${labels![k]}`).join(',');
}

/** metav1.LabelSelector, wire form. */
export interface LabelSelectorWire {
  matchLabels?: Record<string, string> | null;
  matchExpressions?: { key: string; operator: string; values?: string[] | null }[] | null;
}

/**
 * A label selector in selector syntax (`app=web,tier in (a,b),!legacy`), requirements in
 * key order and set values sorted — what `LabelSelectorAsSelector(sel).String()` gives.
 * A missing or empty selector gives ''. Returns undefined for a selector that is not
 * valid (an unknown operator, `In`/`NotIn` without values, `Exists` with values).
 */
export function selectorString(sel: LabelSelectorWire | null | undefined): string | undefined {
  if (!sel) return '';
  const reqs: { key: string; text: string }[] = [];
  for (const [key, value] of Object.entries(sel.matchLabels ?? {}))
    reqs.push({ key, text: `${key}=${value}` });
  for (const e of sel.matchExpressions ?? []) {
    const values = [...new Set(e.values ?? [])].sort();
    switch (e.operator) {
      case 'In':
      case 'NotIn':
        if (values.length === 0) return undefined;
        reqs.push({
          key: e.key,
          text: `${e.key} ${e.operator === 'In' ? 'in' : 'notin'} (${values.join(',')})`,
        });
        break;
      case 'Exists':
      case 'DoesNotExist':
        if (values.length > 0) return undefined;
        reqs.push({ key: e.key, text: e.operator === 'Exists' ? e.key : `!${e.key}` });
        break;
      default:
        return undefined;
    }
  }
  reqs.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return reqs.map((r) => r.text).join(',');
}

/** A label selector for display: selectorString, `<none>` when empty, `<error>` when invalid (metav1.FormatLabelSelector). */
export function formatLabelSelector(sel: LabelSelectorWire | null | undefined): string {
  const s = selectorString(sel);
  if (s === undefined) return '<error>';
  return s === '' ? '<none>' : s;
}

/** Container names and images of a pod template, each comma-joined (the wide CONTAINERS and IMAGES cells). */
export function containerCells(containers: readonly { name?: string; image?: string }[] | null | undefined): {
  names: string;
  images: string;
} {
  const list = containers ?? [];
  return {
    names: list.map((c) => c.name ?? '').join(','),
    images: list.map((c) => c.image ?? '').join(','),
  };
}

/**
 * The first `max` items comma-joined, then ` + N more...` for the rest; `empty` when
 * there are none (the ENDPOINTS and PORTS cells).
 */
export function listWithMore(items: readonly string[], max: number, empty: string): string {
  if (items.length === 0) return empty;
  const shown = items.slice(0, max).join(',');
  return items.length > max ? `${shown} + ${items.length - max} more...` : shown;
}

/** `host:port`, with IPv6 addresses in brackets (net.JoinHostPort). */
export function joinHostPort(host: string, port: number | string): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}
