/**
 * The paths and operations the API server serves, in one neutral form that v2.ts and v3.ts
 * render: per resource the collection (list/watch via `?watch=true`, create,
 * deletecollection), the object (get, replace, patch, delete), the all-namespaces list, and
 * each subresource, with the query parameters each takes; no deprecated `/watch/` paths.
 * Operation ids, tags and actions are named as kube-apiserver names them
 * (`listCoreV1NamespacedPod`, `core_v1`, `x-kubernetes-action`).
 */
import { GIT_VERSION, SUBRESOURCE_SHAPES } from '../discovery.js';
import { CONTENT_TYPE_JSON } from '../document-response.js';
import type { GroupVersionKind } from '../discovery.js';
import type { ResourceInfo, Subresource } from '../resources.js';
import { customDefinitionName } from '../apiextensions/openapi.js';
import { groupPackage, gvk } from './catalogue.js';
import type { Ref } from './catalogue.js';
import type { HttpMethod, OperationAction, ParamType } from './documents.js';

export interface ParamSpec {
  name: string;
  in: 'path' | 'query';
  type: ParamType;
  description: string;
  required?: boolean;
}

export interface ResponseSpec {
  code: '200' | '201' | '202';
  /** The body schema; 'text': a plain string (logs, connect). */
  body: Ref | 'text';
}

export interface OperationSpec {
  method: HttpMethod;
  operationId: string;
  description: string;
  action: OperationAction;
  gvk: GroupVersionKind;
  params: ParamSpec[];
  /** 'object': the kind's schema as JSON/YAML; 'patch': any of PATCH_CONTENT_TYPES. */
  body?: { schema: Ref; as: 'object' | 'patch' };
  responses: ResponseSpec[];
  produces: readonly string[];
}

export interface PathSpec {
  path: string;
  params: ParamSpec[];
  ops: OperationSpec[];
}

function query(name: string, type: ParamType, description: string): ParamSpec {
  return { name, in: 'query', type, description };
}

const P = {
  name: { name: 'name', in: 'path', type: 'string', required: true, description: 'Name of the object.' },
  namespace: {
    name: 'namespace',
    in: 'path',
    type: 'string',
    required: true,
    description: 'Namespace of the objects.',
  },
  pretty: query('pretty', 'string', "If 'true', the output is indented."),
  allowWatchBookmarks: query(
    'allowWatchBookmarks',
    'boolean',
    'Ask for BOOKMARK events on a watch; the server may send them at any time, or not at all.',
  ),
  continue: query('continue', 'string', 'The continue token of the previous page of a paginated list.'),
  fieldSelector: query(
    'fieldSelector',
    'string',
    'Only objects whose fields match this selector. Default: all.',
  ),
  labelSelector: query(
    'labelSelector',
    'string',
    'Only objects whose labels match this selector. Default: all.',
  ),
  limit: query('limit', 'integer', 'The most objects to return; metadata.continue then names the next page.'),
  resourceVersion: query(
    'resourceVersion',
    'string',
    'The resourceVersion to read at (list, get) or to watch from (watch).',
  ),
  resourceVersionMatch: query(
    'resourceVersionMatch',
    'string',
    'How resourceVersion is applied to a list: Exact or NotOlderThan.',
  ),
  sendInitialEvents: query(
    'sendInitialEvents',
    'boolean',
    'With watch=true: start with synthetic ADDED events for the current objects, then a bookmark.',
  ),
  timeoutSeconds: query('timeoutSeconds', 'integer', 'Ends the list or watch call after this many seconds.'),
  watch: query('watch', 'boolean', 'Stream ADDED, MODIFIED and DELETED events instead of returning a list.'),
  dryRun: query('dryRun', 'string', "'All': validate and process the request but persist nothing."),
  fieldManager: query('fieldManager', 'string', 'The name of the actor making the change (managedFields).'),
  fieldValidation: query(
    'fieldValidation',
    'string',
    'What to do with unknown or duplicate fields in the body: Ignore (drop them), Warn (drop them and ' +
      'answer with a warning header per field) or Strict (fail the request with BadRequest).',
  ),
  force: query('force', 'boolean', 'Apply requests only: take over fields owned by other managers.'),
  gracePeriodSeconds: query(
    'gracePeriodSeconds',
    'integer',
    'Seconds before the object is deleted; 0: at once.',
  ),
  orphanDependents: query('orphanDependents', 'boolean', 'Deprecated: use propagationPolicy.'),
  propagationPolicy: query(
    'propagationPolicy',
    'string',
    'What happens to dependents: Orphan, Background (deleted by the garbage collector) or Foreground.',
  ),
} as const satisfies Record<string, ParamSpec>;

const LIST_PARAMS: ParamSpec[] = [
  P.allowWatchBookmarks,
  P.continue,
  P.fieldSelector,
  P.labelSelector,
  P.limit,
  P.resourceVersion,
  P.resourceVersionMatch,
  P.sendInitialEvents,
  P.timeoutSeconds,
  P.watch,
];
const WRITE_PARAMS: ParamSpec[] = [P.dryRun, P.fieldManager, P.fieldValidation];
const DELETE_PARAMS: ParamSpec[] = [P.dryRun, P.gracePeriodSeconds, P.orphanDependents, P.propagationPolicy];

const SUBRESOURCE_PARAMS: Readonly<Partial<Record<Subresource, ParamSpec[]>>> = {
  log: [
    query(
      'container',
      'string',
      'The container to read the log of; may be omitted when the pod has one container.',
    ),
    query('follow', 'boolean', 'Stream the log as it is written.'),
    query('insecureSkipTLSVerifyBackend', 'boolean', 'Do not verify the serving certificate of the kubelet.'),
    query('limitBytes', 'integer', 'The most bytes of log to return.'),
    query('previous', 'boolean', 'The log of the previous, terminated, instance of the container.'),
    query('sinceSeconds', 'integer', 'Only lines written in the last this many seconds.'),
    query('tailLines', 'integer', 'Only this many lines from the end of the log.'),
    query('timestamps', 'boolean', 'Start every line with its RFC 3339 timestamp.'),
  ],
  exec: [
    query('command', 'string', 'The command to run, one parameter per argument.'),
    query('container', 'string', 'The container to run it in.'),
    query('stderr', 'boolean', 'Return the standard error stream.'),
    query('stdin', 'boolean', 'Send a standard input stream.'),
    query('stdout', 'boolean', 'Return the standard output stream.'),
    query('tty', 'boolean', 'Allocate a terminal.'),
  ],
  attach: [
    query('container', 'string', 'The container to attach to.'),
    query('stderr', 'boolean', 'Return the standard error stream.'),
    query('stdin', 'boolean', 'Send a standard input stream.'),
    query('stdout', 'boolean', 'Return the standard output stream.'),
    query('tty', 'boolean', 'Allocate a terminal.'),
  ],
  portforward: [query('ports', 'integer', 'The pod ports to forward.')],
};

const JSON_ONLY = [CONTENT_TYPE_JSON] as const;
const LIST_PRODUCES = [CONTENT_TYPE_JSON, 'application/json;stream=watch'] as const;

function pascal(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

/** `CoreV1`, `AppsV1`, `CoordinationV1`: the group-version part of operation ids. */
function gvIdent(r: ResourceInfo): string {
  return pascal(groupPackage(r.group)) + pascal(r.version);
}

/** `core_v1`, `apps_v1`, `coordination_v1`: the tag of a group-version's operations. */
export function gvTag(r: ResourceInfo): string {
  return `${groupPackage(r.group)}_${r.version}`;
}

export function model(name: string): Ref {
  return { t: 'model', model: name };
}

const STATUS_REF = model('V1Status');
const DELETE_OPTIONS_REF = model('V1DeleteOptions');
const PATCH_REF: Ref = { t: 'special', name: 'Patch' };

/** The kind a subresource's operations are described with: its own model, or the parent's. */
function subresourceModel(r: ResourceInfo, sub: Subresource): { ref: Ref; gvk: GroupVersionKind } {
  const kind = SUBRESOURCE_SHAPES[sub].kind;
  if (!kind && r.custom)
    return {
      ref: { t: 'named', name: customDefinitionName(r, r.kind) },
      gvk: gvk(r.group, r.version, r.kind),
    };
  if (!kind) return { ref: model(r.model), gvk: gvk(r.group, r.version, r.kind) };
  const known: Readonly<Record<string, string>> = {
    Scale: 'V1Scale',
    Binding: 'V1Binding',
    Eviction: 'V1Eviction',
    TokenRequest: 'AuthenticationV1TokenRequest',
  };
  const group = kind.group || r.group;
  const version = kind.version || r.version;
  return { ref: model(known[kind.kind] ?? r.model), gvk: gvk(group, version, kind.kind) };
}

/** Every path and operation the API server serves for one resource. */
export function resourcePaths(r: ResourceInfo): PathSpec[] {
  const base = r.group === '' ? `/api/${r.version}` : `/apis/${r.group}/${r.version}`;
  const scope = r.namespaced ? 'Namespaced' : '';
  const collection = r.namespaced ? `${base}/namespaces/{namespace}/${r.resource}` : `${base}/${r.resource}`;
  const scopeParams: ParamSpec[] = r.namespaced ? [P.namespace] : [];
  const id = gvIdent(r);
  const kindGvk = gvk(r.group, r.version, r.kind);
  // A custom resource's kind and list are defined from its CRD (apiextensions/openapi.ts).
  const kindRef: Ref = r.custom ? { t: 'named', name: customDefinitionName(r, r.kind) } : model(r.model);
  const listRef: Ref = r.custom
    ? { t: 'named', name: customDefinitionName(r, r.listKind) }
    : model(`${r.model}List`);
  const can = (v: string): boolean => (r.verbs as readonly string[]).includes(v);
  const op = (
    o: Omit<OperationSpec, 'gvk' | 'produces'> & Partial<Pick<OperationSpec, 'gvk' | 'produces'>>,
  ) => ({
    gvk: kindGvk,
    produces: JSON_ONLY,
    ...o,
  });

  const paths: PathSpec[] = [];
  const collectionOps: OperationSpec[] = [];
  if (can('list')) {
    collectionOps.push(
      op({
        method: 'get',
        operationId: `list${id}${scope}${r.kind}`,
        description: `list or watch objects of kind ${r.kind}`,
        action: 'list',
        params: LIST_PARAMS,
        responses: [{ code: '200', body: listRef }],
        produces: LIST_PRODUCES,
      }),
    );
  }
  if (can('create')) {
    collectionOps.push(
      op({
        method: 'post',
        operationId: `create${id}${scope}${r.kind}`,
        description: `create ${article(r.kind)} ${r.kind}`,
        action: 'post',
        params: WRITE_PARAMS,
        body: { schema: kindRef, as: 'object' },
        responses: [
          { code: '200', body: kindRef },
          { code: '201', body: kindRef },
          { code: '202', body: kindRef },
        ],
      }),
    );
  }
  if (can('deletecollection')) {
    collectionOps.push(
      op({
        method: 'delete',
        operationId: `delete${id}Collection${scope}${r.kind}`,
        description: `delete collection of ${r.kind}`,
        action: 'deletecollection',
        params: [
          ...DELETE_PARAMS,
          ...LIST_PARAMS.filter((p) => p.name !== 'watch' && p.name !== 'allowWatchBookmarks'),
        ],
        body: { schema: DELETE_OPTIONS_REF, as: 'object' },
        responses: [{ code: '200', body: STATUS_REF }],
      }),
    );
  }
  if (collectionOps.length > 0)
    paths.push({ path: collection, params: [...scopeParams, P.pretty], ops: collectionOps });

  if (r.namespaced && can('list')) {
    paths.push({
      path: `${base}/${r.resource}`,
      params: [P.pretty],
      ops: [
        op({
          method: 'get',
          operationId: `list${id}${r.kind}ForAllNamespaces`,
          description: `list or watch objects of kind ${r.kind} in all namespaces`,
          action: 'list',
          params: LIST_PARAMS,
          responses: [{ code: '200', body: listRef }],
          produces: LIST_PRODUCES,
        }),
      ],
    });
  }

  const item = `${collection}/{name}`;
  const itemParams = [P.name, ...scopeParams, P.pretty];
  const itemOps: OperationSpec[] = [];
  if (can('get')) {
    itemOps.push(
      op({
        method: 'get',
        operationId: `read${id}${scope}${r.kind}`,
        description: `read the specified ${r.kind}`,
        action: 'get',
        params: [],
        responses: [{ code: '200', body: kindRef }],
      }),
    );
  }
  if (can('update'))
    itemOps.push(op(replaceOp(`replace${id}${scope}${r.kind}`, `replace the specified ${r.kind}`, kindRef)));
  if (can('patch'))
    itemOps.push(
      op(patchOp(`patch${id}${scope}${r.kind}`, `partially update the specified ${r.kind}`, kindRef)),
    );
  if (can('delete')) {
    itemOps.push(
      op({
        method: 'delete',
        operationId: `delete${id}${scope}${r.kind}`,
        description: `delete ${article(r.kind)} ${r.kind}`,
        action: 'delete',
        params: DELETE_PARAMS,
        body: { schema: DELETE_OPTIONS_REF, as: 'object' },
        responses: [
          { code: '200', body: STATUS_REF },
          { code: '202', body: STATUS_REF },
        ],
      }),
    );
  }
  if (itemOps.length > 0) paths.push({ path: item, params: itemParams, ops: itemOps });

  for (const sub of r.subresources) {
    const { ref, gvk: subGvk } = subresourceModel(r, sub);
    const subId = `${scope}${r.kind}${pascal(sub)}`;
    const ops: OperationSpec[] = [];
    const subOp = (o: Omit<OperationSpec, 'gvk' | 'produces'> & Partial<Pick<OperationSpec, 'produces'>>) =>
      op({ ...o, gvk: subGvk });
    switch (sub) {
      case 'status':
      case 'scale':
        ops.push(
          subOp({
            method: 'get',
            operationId: `read${id}${subId}`,
            description: `read ${sub} of the specified ${r.kind}`,
            action: 'get',
            params: [],
            responses: [{ code: '200', body: ref }],
          }),
          subOp(replaceOp(`replace${id}${subId}`, `replace ${sub} of the specified ${r.kind}`, ref)),
          subOp(patchOp(`patch${id}${subId}`, `partially update ${sub} of the specified ${r.kind}`, ref)),
        );
        break;
      case 'binding':
      case 'eviction':
      case 'token':
        ops.push(
          subOp({
            method: 'post',
            operationId: `create${id}${subId}`,
            description: `create ${sub} of ${article(r.kind)} ${r.kind}`,
            action: 'post',
            params: WRITE_PARAMS,
            body: { schema: ref, as: 'object' },
            responses: [
              { code: '200', body: ref },
              { code: '201', body: ref },
              { code: '202', body: ref },
            ],
          }),
        );
        break;
      case 'finalize':
        ops.push(
          subOp(replaceOp(`replace${id}${subId}`, `replace finalize of the specified ${r.kind}`, ref)),
        );
        break;
      case 'log':
        ops.push(
          subOp({
            method: 'get',
            operationId: `read${id}${subId}`,
            description: `read log of the specified ${r.kind}`,
            action: 'get',
            params: SUBRESOURCE_PARAMS.log ?? [],
            responses: [{ code: '200', body: 'text' }],
            produces: ['text/plain'],
          }),
        );
        break;
      case 'exec':
      case 'attach':
      case 'portforward':
        for (const method of ['get', 'post'] as const) {
          ops.push(
            subOp({
              method,
              operationId: `connect${id}${pascal(method)}${subId}`,
              description: `connect ${method.toUpperCase()} requests to ${sub} of ${r.kind}`,
              action: 'connect',
              params: SUBRESOURCE_PARAMS[sub] ?? [],
              responses: [{ code: '200', body: 'text' }],
              produces: ['*/*'],
            }),
          );
        }
        break;
    }
    const subParams =
      sub === 'status' || sub === 'scale' || sub === 'log' ? itemParams : [P.name, ...scopeParams];
    paths.push({ path: `${item}/${sub}`, params: subParams, ops });
  }
  return paths;
}

function replaceOp(
  operationId: string,
  description: string,
  ref: Ref,
): Omit<OperationSpec, 'gvk' | 'produces'> {
  return {
    method: 'put',
    operationId,
    description,
    action: 'put',
    params: WRITE_PARAMS,
    body: { schema: ref, as: 'object' },
    responses: [
      { code: '200', body: ref },
      { code: '201', body: ref },
    ],
  };
}

function patchOp(
  operationId: string,
  description: string,
  ref: Ref,
): Omit<OperationSpec, 'gvk' | 'produces'> {
  return {
    method: 'patch',
    operationId,
    description,
    action: 'patch',
    params: [...WRITE_PARAMS, P.force],
    body: { schema: PATCH_REF, as: 'patch' },
    responses: [
      { code: '200', body: ref },
      { code: '201', body: ref },
    ],
  };
}

function article(kind: string): string {
  return /^[AEIOU]/.test(kind) ? 'an' : 'a';
}

export const RESPONSE_TEXT: Readonly<Record<ResponseSpec['code'], string>> = {
  '200': 'OK',
  '201': 'Created',
  '202': 'Accepted',
};
/** The schemas an operation names directly. */
export function operationRefs(o: OperationSpec): Ref[] {
  const refs: Ref[] = [];
  if (o.body) refs.push(o.body.schema);
  for (const res of o.responses) if (res.body !== 'text') refs.push(res.body);
  return refs;
}

export const SECURITY = {
  schemes: {
    BearerToken: {
      type: 'apiKey' as const,
      name: 'authorization',
      in: 'header' as const,
      description: 'Bearer token authentication: "Authorization: Bearer <token>".',
    },
  },
  requirement: [{ BearerToken: [] as string[] }],
};

export const INFO = { title: 'Kubernetes', version: GIT_VERSION };
