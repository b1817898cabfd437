/**
 * Writing answers (kube-apiserver's handlers/responsewriters and transformResponseObject):
 * a verb's result in the form the request negotiated (negotiation.ts: JSON or YAML, as it
 * is or converted to a Table, a PartialObjectMetadata or a PartialObjectMetadataList), and
 * a metav1.Status.
 */
import type { ServerResponse } from 'node:http';
import type { KubeList, KubeObject } from '../../../api/object.js';
import {
  asPartialObjectMetadata,
  asPartialObjectMetadataList,
  encodeOutput,
  isList,
  tryNegotiateOutput,
  type OutputContentType,
  type OutputMedia,
} from '../negotiation.js';
import type { Status } from '../status.js';
import { toTable, type IncludeObjectPolicy } from '../table.js';
import type { RequestScope } from './scope.js';

/** Writes `body` as JSON with status `code` (Content-Length set; the response ends). */
export function writeJson(res: ServerResponse, code: number, body: unknown): void {
  writeEncoded(res, code, body, 'application/json');
}

/** Writes `body` encoded as `contentType` with status `code` (the response ends). */
export function writeEncoded(
  res: ServerResponse,
  code: number,
  body: unknown,
  contentType: OutputContentType,
): void {
  const text = encodeOutput(body, contentType);
  res.writeHead(code, { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

/**
 * Writes a metav1.Status with its code: in YAML when `accept` negotiates YAML (as
 * kube-apiserver's ErrorNegotiated), else JSON (also when nothing can be negotiated).
 */
export function writeStatus(res: ServerResponse, status: Status, accept?: string): void {
  const media = accept === undefined ? undefined : tryNegotiateOutput(accept);
  writeEncoded(res, status.code, status, media?.contentType ?? 'application/json');
}

/** What `respond` needs beyond the scope's request: the negotiated form and the Table options. */
export interface ResponseForm {
  output: OutputMedia;
  /** `?includeObject=` of a Table answer (read before the verb runs). */
  includeObject: IncludeObjectPolicy;
}

/**
 * Writes a verb's result in the request's negotiated form (`scope.output`): a Status as it
 * is; otherwise converted as asked (a Table of the object or of the list's items, with
 * their list metadata, except for a Scale; a PartialObjectMetadata of an object; a PartialObjectMetadataList
 * of a list), then encoded as JSON or YAML.
 * @throws ApiError 406 for PartialObjectMetadata of a list or PartialObjectMetadataList of
 *   an object (transformResponseObject's refusals; nothing is written then).
 */
export function respond(scope: RequestScope, code: number, body: KubeObject | KubeList | Status): void {
  const { output, includeObject } = scope.form;
  const convert = output.convert;
  let out: unknown = body;
  if (convert !== undefined && body.kind !== 'Status') {
    const obj = body as KubeObject | KubeList;
    switch (convert.kind) {
      case 'PartialObjectMetadata':
        out = asPartialObjectMetadata(obj as KubeObject, convert.version);
        break;
      case 'PartialObjectMetadataList':
        out = asPartialObjectMetadataList(obj, convert.version);
        break;
      // A Scale (the scale subresource) has no columns of its own here: it is sent as it is.
      case 'Table': {
        if (scope.rr.subresource === 'scale') break;
        const opts = { includeObject, now: scope.now, version: convert.version };
        out = isList(obj)
          ? toTable(scope.rr.resource, obj.items, {
              ...opts,
              ...(obj.metadata ? { listMeta: obj.metadata } : {}),
            })
          : toTable(scope.rr.resource, [obj], opts);
        break;
      }
    }
  }
  writeEncoded(scope.res, code, out, output.contentType);
}
