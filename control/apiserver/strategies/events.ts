/**
 * Event, in both of its API groups: core/v1 (`kubectl get events`, client-go's old
 * recorder) and events.k8s.io/v1 (the new recorder). Kubernetes serves both from one
 * internal Event (pkg/registry/core/event/strategy.go, pkg/apis/core/validation/events.go);
 * k8ts stores them apart (resources.ts), so the events.k8s.io strategy maps its fields
 * (regarding, note, deprecatedSource, ...) onto the internal view and reports errors with
 * the internal field names, as Kubernetes does.
 *
 * Both: no status, no generation; TTL-based expiry is the registry's concern.
 */
import type { FieldError } from '../../../api/meta/validation.js';
import { invalid, isQualifiedName, required } from '../../../api/meta/validation.js';
import type { KubeObject } from '../../../api/object.js';
import type { Obj } from './meta.js';
import {
  asObj,
  child,
  defaultPointer,
  defineStrategy,
  immutable,
  num,
  problems,
  semanticEqual,
  str,
} from './meta.js';

const REPORTING_INSTANCE_LIMIT = 128;
const ACTION_LIMIT = 128;
const REASON_LIMIT = 128;
const NOTE_LIMIT = 1024;

/** The internal Event fields validation reads, whichever group the object came from. */
interface EventView {
  namespace: string;
  involvedObject: Obj;
  reason: unknown;
  message: unknown;
  source: Obj;
  firstTimestamp: unknown;
  lastTimestamp: unknown;
  count: unknown;
  type: unknown;
  eventTime: unknown;
  series: unknown;
  action: unknown;
  related: unknown;
  reportingController: unknown;
  reportingInstance: unknown;
}

function coreView(e: KubeObject): EventView {
  return {
    namespace: str(e.metadata?.namespace),
    involvedObject: asObj(e.involvedObject) ?? {},
    reason: e.reason,
    message: e.message,
    source: asObj(e.source) ?? {},
    firstTimestamp: e.firstTimestamp,
    lastTimestamp: e.lastTimestamp,
    count: e.count,
    type: e.type,
    eventTime: e.eventTime,
    series: e.series,
    action: e.action,
    related: e.related,
    reportingController: e.reportingComponent,
    reportingInstance: e.reportingInstance,
  };
}

function eventsView(e: KubeObject): EventView {
  return {
    namespace: str(e.metadata?.namespace),
    involvedObject: asObj(e.regarding) ?? {},
    reason: e.reason,
    message: e.note,
    source: asObj(e.deprecatedSource) ?? {},
    firstTimestamp: e.deprecatedFirstTimestamp,
    lastTimestamp: e.deprecatedLastTimestamp,
    count: e.deprecatedCount,
    type: e.type,
    eventTime: e.eventTime,
    series: e.series,
    action: e.action,
    related: e.related,
    reportingController: e.reportingController,
    reportingInstance: e.reportingInstance,
  };
}

const isSet = (t: unknown): boolean => t !== undefined && t !== null && t !== '';
const bytes = (v: unknown): number => Buffer.byteLength(str(v));

/**
 * legacyValidateEvent: events without eventTime (old style) must be in their involved
 * object's namespace (or `default` for cluster-scoped objects); events with eventTime need
 * reportingController (a qualified name), reportingInstance, action and reason, with
 * length limits, and a namespace matching the involved object unless in default or
 * kube-system. `controllerField` is `reportingComponent` for core/v1.
 */
function legacyValidate(e: EventView, controllerField: string): FieldError[] {
  const errs: FieldError[] = [];
  const involvedNs = str(e.involvedObject.namespace);
  const mismatch = (): FieldError =>
    invalid('involvedObject.namespace', involvedNs, 'does not match event.namespace');
  if (!isSet(e.eventTime)) {
    if (involvedNs === '' ? e.namespace !== '' && e.namespace !== 'default' : e.namespace !== involvedNs) {
      errs.push(mismatch());
    }
    return errs;
  }
  if (involvedNs === '' && e.namespace !== 'default' && e.namespace !== 'kube-system') errs.push(mismatch());
  const controller = str(e.reportingController);
  if (controller === '') errs.push(required(controllerField));
  errs.push(...problems(controllerField, controller, isQualifiedName(controller)));
  const limits: [string, unknown, number][] = [
    ['reportingInstance', e.reportingInstance, REPORTING_INSTANCE_LIMIT],
    ['action', e.action, ACTION_LIMIT],
    ['reason', e.reason, REASON_LIMIT],
  ];
  for (const [field, value, limit] of limits) {
    if (str(value) === '') errs.push(required(field));
    if (bytes(value) > limit) errs.push(invalid(field, '', `can have at most ${limit} characters`));
  }
  if (bytes(e.message) > NOTE_LIMIT)
    errs.push(invalid('message', '', `can have at most ${NOTE_LIMIT} characters`));
  return errs;
}

/** validateV1EventSeries: a series has count >= 2 and a lastObservedTime. */
function validateSeries(e: EventView): FieldError[] {
  const series = asObj(e.series);
  if (!series) return [];
  const errs: FieldError[] = [];
  if ((num(series.count) ?? 0) < 2) errs.push(invalid('series.count', '', 'should be at least 2'));
  if (!isSet(series.lastObservedTime)) errs.push(required('series.lastObservedTime'));
  return errs;
}

/**
 * The core/v1 Event strategy: legacy validation only, on create and update (Kubernetes
 * keeps v1 permissive for old clients). Defaults add the always-serialized fields:
 * `involvedObject: {}`, `source: {}`, `reportingComponent: ""`, `reportingInstance: ""`.
 * Field selectors: involvedObject.{kind,namespace,name,uid,apiVersion,resourceVersion,
 * fieldPath}, reason, reportingComponent, source (source.component, else
 * reportingComponent), type.
 */
export const coreEventStrategy = defineStrategy({
  namespaced: true,
  allowCreateOnUpdate: true,
  defaults(obj) {
    const o = obj as Obj;
    child(o, 'involvedObject');
    child(o, 'source');
    defaultPointer(o, 'reportingComponent', '');
    defaultPointer(o, 'reportingInstance', '');
  },
  validate: (obj) => legacyValidate(coreView(obj), 'reportingComponent'),
  fields: (obj) => selectable(coreView(obj), 'involvedObject', 'reportingComponent'),
});

const IMMUTABLE: readonly (keyof EventView)[] = [
  'involvedObject',
  'reason',
  'message',
  'source',
  'firstTimestamp',
  'lastTimestamp',
  'count',
  'type',
  'eventTime',
  'action',
  'related',
  'reportingController',
  'reportingInstance',
];

/**
 * The events.k8s.io/v1 Event strategy: legacy validation plus, on create, eventTime
 * required, type Normal or Warning (`has invalid value: X`), the deprecated fields unset
 * (`needs to be unset`) and a valid series; on update, everything but series and metadata
 * is immutable. Defaults: `regarding: {}` and `deprecatedSource: {}` (always serialized).
 * Field selectors as Kubernetes' events/v1 conversion: regarding.*, reason,
 * reportingController, source, type.
 */
export const eventsEventStrategy = defineStrategy({
  namespaced: true,
  allowCreateOnUpdate: true,
  defaults(obj) {
    child(obj as Obj, 'regarding');
    child(obj as Obj, 'deprecatedSource');
  },
  validate(obj, create) {
    const e = eventsView(obj);
    const errs = legacyValidate(e, 'reportingController');
    if (!create) return errs;
    errs.push(...validateSeries(e));
    if (!isSet(e.eventTime)) errs.push(required('eventTime'));
    if (e.type !== 'Normal' && e.type !== 'Warning')
      errs.push(invalid('type', '', `has invalid value: ${str(e.type)}`));
    for (const f of ['firstTimestamp', 'lastTimestamp'] as const) {
      if (isSet(e[f])) errs.push(invalid(f, '', 'needs to be unset'));
    }
    if (num(e.count)) errs.push(invalid('count', '', 'needs to be unset'));
    if (str(e.source.component) !== '' || str(e.source.host) !== '')
      errs.push(invalid('source', '', 'needs to be unset'));
    return errs;
  },
  validateUpdate(obj, old) {
    const now = eventsView(obj);
    const before = eventsView(old);
    const errs = semanticEqual(now.series, before.series) ? [] : validateSeries(now);
    for (const f of IMMUTABLE) errs.push(...immutable(now[f], before[f], f));
    return errs;
  },
  fields: (obj) => selectable(eventsView(obj), 'regarding', 'reportingController'),
});

function selectable(e: EventView, refName: string, controllerName: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of ['kind', 'namespace', 'name', 'uid', 'apiVersion', 'resourceVersion', 'fieldPath']) {
    out[`${refName}.${k}`] = str(e.involvedObject[k]);
  }
  out.reason = str(e.reason);
  out[controllerName] = str(e.reportingController);
  out.source = str(e.source.component) || str(e.reportingController);
  out.type = str(e.type);
  return out;
}
