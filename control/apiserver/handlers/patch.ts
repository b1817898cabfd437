/**
 * PATCH (kube-apiserver's handlers/patch.go: PatchResource): JSON patch, merge patch,
 * strategic merge patch or server-side apply (patch.ts applyPatch), applied to the stored
 * object in a read-modify-write that retries on conflicts; the patched object is checked
 * for field types and, except for apply (which refuses undeclared fields itself), by
 * `fieldValidation`. Server-side apply of a missing object creates it. Admission's admit
 * phase has run on the URL before (index.ts).
 */
import { checkPatchedFieldTypes, fieldValidationDirective } from '../fieldvalidation/index.js';
import {
  APPLY_PATCH_TYPE,
  applyPatch,
  applyStrictDecoding,
  createFromApply,
  patchTypeOf,
  validatePatchOptions,
} from '../patch.js';
import { readBody } from '../request.js';
import { PATCH_CONTENT_TYPES } from '../encoding/media-types.js';
import { ApiError, badRequest, methodNotAllowed, unsupportedMediaType } from '../status.js';
import { toScale, updateScale } from '../subresources.js';
import { checkPatchedFields } from './decode.js';
import { respond } from './response.js';
import { isNotFoundOf, type RequestScope } from './scope.js';

/**
 * PATCH `.../<name>` (or `/status`, `/scale`): 200 with the stored object; 201 when
 * server-side apply created it.
 * @throws ApiError 405 on another subresource; 415 for an unknown patch type; 400 for
 *   bad patch options or a patch that does not apply; 404 when missing (except apply);
 *   409 for apply conflicts without `force`; 422 from validation; 403 from admission or
 *   RBAC escalation prevention.
 */
export async function patchResource(scope: RequestScope): Promise<void> {
  const { rr, registry, req, query: q, user, dryRun, server, now } = scope;
  const sub = rr.subresource;
  const type = patchTypeOf(req.headers['content-type']);
  // Custom resources take no strategic merge patch (Strategy.patchTypes), as upstream.
  if (!registry.acceptsPatchType(type))
    throw unsupportedMediaType(
      type,
      PATCH_CONTENT_TYPES.filter((t) => registry.acceptsPatchType(t)),
    );
  const force = q.get('force');
  const patchOpts = {
    ...(q.get('fieldManager') !== null ? { fieldManager: q.get('fieldManager')! } : {}),
    ...(force !== null ? { force: force === 'true' } : {}),
  };
  validatePatchOptions(type, patchOpts);
  const directive = fieldValidationDirective(q, 'patch');
  const body = await readBody(req);
  if (sub === 'scale') {
    const current = await registry.get(rr.namespace, rr.name!);
    const scale = applyPatch({
      contentType: type,
      original: toScale(current, registry.scale),
      patch: body,
      model: 'V1Scale',
      ...patchOpts,
      now,
    });
    respond(scope, 200, await updateScale(registry, rr.namespace!, rr.name!, scale, dryRun, scope.warn));
    return;
  }
  if (sub !== undefined && sub !== 'status')
    throw methodNotAllowed('PATCH', `${rr.resource.resource}/${sub}`);
  const isApply = type === APPLY_PATCH_TYPE;
  const common = {
    model: rr.resource.model,
    apiVersion: scope.groupVersion,
    kind: rr.resource.kind,
    now,
    ...patchOpts,
    ...(sub ? { subresource: sub } : {}),
    resetFields: scope.resetFields,
  };
  try {
    // A binding's roleRef is the stored one (it cannot change); a role's rules are
    // checked on the patched object.
    const escalation = await server.escalationCheck(
      rr,
      user,
      rr.resource.resource.endsWith('bindings') ? await registry.get(rr.namespace, rr.name!) : undefined,
    );
    const patched = await registry.guaranteedUpdate(
      rr.namespace,
      rr.name!,
      (current) => {
        const patched = applyPatch({ contentType: type, original: current, patch: body, ...common });
        // After a successful apply, the apply patcher decodes the body strictly once more.
        if (isApply) for (const w of applyStrictDecoding(body, directive)) scope.warn(w);
        escalation?.(patched, current);
        const custom = rr.resource.custom !== undefined;
        if (!custom) checkPatchedFieldTypes(rr.resource.model, patched, type, body);
        // Server-side apply rejects undeclared fields itself, whatever the directive (a
        // custom resource's are pruned by its schema).
        if (!isApply || custom)
          checkPatchedFields(
            patched,
            type,
            body,
            scope.warn,
            q,
            rr.resource.model,
            custom ? (obj) => registry.unknownFields(obj) ?? [] : undefined,
          );
        return patched;
      },
      {
        ...(isApply ? { dryRun, owned: true, warn: scope.warn, admit: scope.validate } : scope.write),
        ...(sub === 'status' ? { subresource: 'status' as const } : {}),
      },
    );
    if (!dryRun) await registry.finishDeletionIfDone(patched);
    respond(scope, 200, patched);
  } catch (err) {
    // Server-side apply of an object that does not exist creates it.
    if (!(
      isApply &&
      sub === undefined &&
      err instanceof ApiError &&
      err.code === 404 &&
      isNotFoundOf(err, rr)
    ))
      throw err;
    const obj = createFromApply({ patch: body, ...common });
    for (const w of applyStrictDecoding(body, directive)) scope.warn(w);
    const meta = (obj.metadata ??= {});
    if (meta.name !== undefined && meta.name !== rr.name)
      throw badRequest(
        `the name of the object (${meta.name}) does not match the name on the URL (${rr.name})`,
      );
    meta.name = rr.name!;
    await scope.admit('CREATE', obj);
    (await server.escalationCheck(rr, user, obj))?.(obj);
    const applied = { dryRun, owned: true, warn: scope.warn, admit: scope.validate };
    respond(scope, 201, await registry.create(rr.namespace, obj, applied));
  }
}
