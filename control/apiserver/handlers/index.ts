/**
 * The endpoint handlers of resource requests, one file per verb, as kube-apiserver's
 * k8s.io/apiserver/pkg/endpoints/handlers:
 *
 *   get.ts      get, list
 *   create.ts   create (and a Pod's binding and eviction, the access reviews)
 *   update.ts   update (and status, finalize, scale)
 *   patch.ts    patch and server-side apply
 *   delete.ts   delete, deletecollection
 *   watch.ts    watch
 *   filters.ts  authentication (and impersonation), authorization
 *
 * The chain of every resource request, written out once (steps 1 and 2 are the filters
 * of filters.ts, which server.ts `handle` runs; 3 and 4 are here):
 *
 *   1. authenticate  authenticateRequest: client certificate or bearer token, then
 *                    impersonation (401 without credentials, 403 when it may not
 *                    impersonate)
 *   2. authorize     authorizeRequest: system:masters, Node, RBAC on the request's
 *                    attributes (403)
 *   3. admit         admission/index.ts, admit phase: an update or a patch in
 *                    `serveResource` below, on its URL alone; a create in create.ts once its
 *                    body is decoded; a delete in delete.ts once its options are read
 *   4. registry      the verb's handler → Registry (the kind's strategy: defaults,
 *                    validation) → admission's validate phase on the object about to be
 *                    stored (the registry's `admit` hook, `scope.validate`) → Store
 *
 * A per-kind rule belongs in the kind's strategy (strategies/) or in an admission plugin
 * (admission/), not in a handler.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { KubeObject } from '../../../api/object.js';
import { deprecationWarningOf } from '../apiextensions/custom-resources.js';
import type { AdmissionRecorder, AdmissionRequest } from '../admission/index.js';
import type { UserInfo } from '../../../api/auth/user.js';
import { proxyPodLog } from '../node-proxy.js';
import { managerOrUserAgent, recordUpdate } from '../patch.js';
import type { Registry, WriteOptions } from '../registry.js';
import type { RequestVerb, ResourceRequest } from '../request.js';
import { groupVersion } from '../resources.js';
import { JSON_OUTPUT, negotiateOutput, notAcceptable } from '../negotiation.js';
import { badRequest, methodNotAllowed } from '../status.js';
import { parseIncludeObject } from '../table.js';
import { createResource } from './create.js';
import { deleteCollection, deleteResource } from './delete.js';
import { getResource, listResource } from './get.js';
import { patchResource } from './patch.js';
import type { RequestScope, ResourceHandler, ServerServices } from './scope.js';
import { updateResource } from './update.js';
import { watchResource } from './watch.js';

export type { EscalationCheck, RequestScope, ResourceHandler, ServerServices } from './scope.js';
export { writeJson, writeStatus } from './response.js';

/** The handler of each verb: exactly one place lists them. */
const HANDLERS: Readonly<Record<RequestVerb, ResourceHandler>> = {
  get: getResource,
  list: listResource,
  create: createResource,
  update: updateResource,
  patch: patchResource,
  delete: deleteResource,
  deletecollection: deleteCollection,
  watch: watchResource,
};

/** What `newRequestScope` is built from: one authenticated, authorized resource request. */
export interface RequestScopeInit {
  server: ServerServices;
  rr: ResourceRequest;
  /** The registry of `rr.resource`. */
  registry: Registry;
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  user: UserInfo;
  /** Where admission's warnings and audit annotations of this request go. */
  recorder: AdmissionRecorder;
}

/**
 * The scope of one request: `dryRun=All`, the request's time (the server's clock), the
 * answer's negotiated form, and the two admission phases and the write options bound to
 * the request's resource, user and field manager (`fieldManager`, else the User-Agent's
 * program name, as Kubernetes' field manager records managedFields for every write but
 * apply).
 * @throws ApiError 406 when the Accept header cannot be satisfied (negotiation.ts), 400
 *   for a Table's bad `includeObject`: before anything is read or written.
 */
export function newRequestScope(init: RequestScopeInit): RequestScope {
  const { server, rr, registry, req, res, url, user, recorder } = init;
  const query = url.searchParams;
  const dryRun = query.getAll('dryRun').includes('All');
  const sub = rr.subresource;
  const now = server.now?.() ?? new Date();
  // Streams of their own (logs, exec, attach, port-forward) negotiate nothing here.
  const output =
    sub === 'log' || sub === 'exec' || sub === 'attach' || sub === 'portforward'
      ? JSON_OUTPUT
      : negotiateOutput(req.headers.accept, { stream: rr.verb === 'watch' });
  // A conversion the verb's result cannot take is refused now, before a write, not after it.
  const listResult = rr.verb === 'list' || rr.verb === 'deletecollection';
  const convert = output.convert?.kind;
  if (convert === 'PartialObjectMetadata' && listResult)
    throw notAcceptable('you requested PartialObjectMetadata, but the requested object is a list');
  if (convert === 'PartialObjectMetadataList' && !listResult && rr.verb !== 'watch')
    throw notAcceptable('you requested PartialObjectMetadataList, but the requested object is not a list');
  const form = {
    output,
    includeObject:
      output.convert?.kind === 'Table'
        ? parseIncludeObject(query.get('includeObject'))
        : ('Metadata' as const),
  };
  const manager = managerOrUserAgent(query.get('fieldManager') ?? undefined, req.headers['user-agent']);
  const gv = groupVersion(rr.resource);
  const resetFields = rr.resource.subresources.includes('status') && sub === undefined ? ['status'] : [];
  const admit = (operation: AdmissionRequest['operation'], body?: KubeObject) =>
    server.admission.admit(
      {
        operation,
        resource: rr.resource,
        subresource: sub,
        namespace: rr.namespace,
        name: rr.name ?? body?.metadata?.name ?? '',
        body,
        user,
        dryRun,
      },
      recorder,
    );
  const validate = (obj: KubeObject, old: KubeObject | undefined) =>
    server.admission.validate(
      {
        operation: old ? 'UPDATE' : 'CREATE',
        resource: rr.resource,
        subresource: sub,
        namespace: rr.namespace,
        name: obj.metadata?.name ?? '',
        object: obj,
        oldObject: old,
        user,
        dryRun,
      },
      recorder,
    );
  // Every warning of the request (field validation, the kind's strategy, admission) goes to
  // its one recorder, as kube-apiserver's warning recorder in the request context.
  const warn = (message: string): void => recorder.warn(message);
  // Every request to a deprecated version of a custom resource says so.
  const deprecation = deprecationWarningOf(rr.resource);
  if (deprecation !== undefined) warn(deprecation);
  // Bodies are decoded per request and results only serialized: the registry may keep them.
  const write: WriteOptions = {
    dryRun,
    owned: true,
    warn,
    admit: validate,
    beforeWrite: (obj, old, sent) => {
      // On create, ownership is of what the client sent (defaulted), as upstream: fields the
      // strategy or admission add are nobody's.
      const recorded = recordUpdate(sent ?? obj, old, manager, gv, now, {
        model: rr.resource.model,
        ...(sub ? { subresource: sub } : {}),
        resetFields,
      });
      if (recorded !== obj) {
        const meta = (obj.metadata ??= {});
        if (recorded.metadata?.managedFields) meta.managedFields = recorded.metadata.managedFields;
        else delete meta.managedFields;
      }
    },
  };
  return {
    server,
    rr,
    registry,
    req,
    res,
    query,
    user,
    dryRun,
    now,
    form,
    groupVersion: gv,
    resetFields,
    write,
    warn,
    validate,
    admit,
  };
}

/**
 * Serves one resource request that has been authenticated and authorized (steps 3 and 4
 * of the chain in the file comment): answers on `scope.res`.
 * @throws ApiError for every refusal (the server writes it as a metav1.Status): 405 for
 *   a verb a subresource does not serve, 400 for exec, attach and portforward without an
 *   upgrade, and whatever admission and the verb's handler throw.
 */
export async function serveResource(scope: RequestScope): Promise<void> {
  const { rr, req } = scope;
  const sub = rr.subresource;
  // The admit phase of an update or patch needs only the URL, so it comes first.
  if (rr.verb === 'update' || rr.verb === 'patch') await scope.admit('UPDATE');
  if (sub === 'log') {
    if (rr.verb !== 'get') throw methodNotAllowed(req.method ?? 'GET', 'pods/log');
    await proxyPodLog(
      { pods: scope.registry, tunnels: scope.server.tunnels },
      rr.namespace!,
      rr.name!,
      scope.query,
      req,
      scope.res,
    );
    return;
  }
  // These stream over an upgraded connection (server.ts handleUpgrade), never a plain request.
  if (sub === 'exec' || sub === 'attach' || sub === 'portforward')
    throw badRequest('Upgrade request required');
  // A Namespace's finalize subresource is update-only, as Kubernetes serves it.
  if (sub === 'finalize' && rr.verb !== 'update')
    throw methodNotAllowed(req.method ?? 'GET', `${rr.resource.resource}/${sub}`);
  await HANDLERS[rr.verb](scope);
}
