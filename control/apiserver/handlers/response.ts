/**
 * Writing answers (kube-apiserver's handlers/responsewriters, reduced to JSON): an object
 * or list with its code, and a metav1.Status.
 */
import type { ServerResponse } from 'node:http';
import type { Status } from '../status.js';

/** Writes `body` as JSON with status `code` (Content-Length set; the response ends). */
export function writeJson(res: ServerResponse, code: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(code, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

/** Writes a metav1.Status with its code. */
export function writeStatus(res: ServerResponse, status: Status): void {
  writeJson(res, status.code, status);
}
