/**
 * Events: LAST SEEN TYPE REASON OBJECT MESSAGE, wide SUBOBJECT SOURCE FIRST SEEN COUNT
 * NAME — the column order of Kubernetes' printEvent, wide columns interleaved.
 *
 * FIRST SEEN is firstTimestamp (eventTime when unset); LAST SEEN is lastTimestamp (FIRST
 * SEEN when unset), or series.lastObservedTime for an event series. COUNT is
 * series.count, else count, at least 1. OBJECT is `<kind in lower case>/<name>`.
 *
 * events.k8s.io/v1 Events are printed through the same row after mapping their fields to
 * the core/v1 names (regarding → involvedObject, note → message, deprecated* → the
 * timestamps, count and source), as Kubernetes serves both from one internal type.
 */
import type { KubeObject } from '../../../api/object.js';
import { since } from './format.js';
import { column, type PrintedRow, type TablePrinter } from './printer.js';

interface CoreEventWire extends KubeObject {
  involvedObject?: { kind?: string; name?: string; fieldPath?: string };
  reason?: string;
  message?: string;
  type?: string;
  count?: number;
  firstTimestamp?: string | null;
  lastTimestamp?: string | null;
  eventTime?: string | null;
  series?: { count?: number; lastObservedTime?: string } | null;
  source?: { component?: string; host?: string };
  reportingComponent?: string;
  reportingInstance?: string;
}

interface EventsV1Wire extends KubeObject {
  regarding?: CoreEventWire['involvedObject'];
  note?: string;
  reason?: string;
  type?: string;
  eventTime?: string | null;
  series?: CoreEventWire['series'];
  reportingController?: string;
  reportingInstance?: string;
  deprecatedSource?: CoreEventWire['source'];
  deprecatedFirstTimestamp?: string | null;
  deprecatedLastTimestamp?: string | null;
  deprecatedCount?: number;
}

function printCoreEvent(obj: KubeObject, now: Date): PrintedRow {
  const ev = obj as CoreEventWire;
  const firstSeen = ev.firstTimestamp ? since(ev.firstTimestamp, now) : since(ev.eventTime, now);
  let lastSeen = ev.lastTimestamp ? since(ev.lastTimestamp, now) : firstSeen;
  let count = ev.count ?? 0;
  if (ev.series) {
    lastSeen = since(ev.series.lastObservedTime, now);
    count = ev.series.count ?? 0;
  } else if (count === 0) {
    // Events of the new API that happened once carry no count.
    count = 1;
  }
  const kind = (ev.involvedObject?.kind ?? '').toLowerCase();
  const target = ev.involvedObject?.name ? `${kind}/${ev.involvedObject.name}` : kind;
  const component = ev.source?.component || ev.reportingComponent || '';
  const instance = ev.source?.host || ev.reportingInstance || '';
  return {
    cells: [
      lastSeen,
      ev.type ?? '',
      ev.reason ?? '',
      target,
      ev.involvedObject?.fieldPath ?? '',
      instance ? `${component}, ${instance}` : component,
      (ev.message ?? '').trim(),
      firstSeen,
      count,
      ev.metadata?.name ?? '',
    ],
  };
}

const columns = [
  column('Last Seen', 'string', 'Time since the event was last observed.'),
  column('Type', 'string', 'Normal or Warning.'),
  column('Reason', 'string', 'Why the event happened, in CamelCase.'),
  column('Object', 'string', 'The object the event is about.'),
  column('Subobject', 'string', 'The part of the object the event is about, e.g. a container.', {
    priority: 1,
  }),
  column('Source', 'string', 'The component (and host) that reported the event.', { priority: 1 }),
  column('Message', 'string', 'A description of the event for humans.'),
  column('First Seen', 'string', 'Time since the event was first observed.', { priority: 1 }),
  column('Count', 'string', 'How often the event was observed.', { priority: 1 }),
  column('Name', 'string', "The event's name.", { priority: 1, format: 'name' }),
];

export const eventPrinter: TablePrinter = { columns, row: printCoreEvent };

/** events.k8s.io/v1 Events, printed as their core/v1 equivalent. */
export const eventsV1Printer: TablePrinter = {
  columns,
  row: (obj, now) => {
    const ev = obj as EventsV1Wire;
    const core: CoreEventWire = {
      metadata: ev.metadata,
      involvedObject: ev.regarding,
      reason: ev.reason,
      message: ev.note,
      type: ev.type,
      count: ev.deprecatedCount,
      firstTimestamp: ev.deprecatedFirstTimestamp,
      lastTimestamp: ev.deprecatedLastTimestamp,
      eventTime: ev.eventTime,
      series: ev.series,
      source: ev.deprecatedSource,
      reportingComponent: ev.reportingController,
      reportingInstance: ev.reportingInstance,
    };
    return printCoreEvent(core, now);
  },
};
