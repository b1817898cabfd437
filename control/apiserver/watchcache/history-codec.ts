/**
 * How the watch cache keeps the JSON of versions that are history (a version a newer one
 * replaced, one a delete removed, or, in a cache that keeps nothing decoded, any object):
 * deflated against a preset dictionary that is the JSON of another object of the same
 * resource.
 *
 * Why a dictionary: two pods of one ReplicaSet differ in their name, uid, node, IPs and
 * timestamps, and share everything else. Deflated alone a 4.1 KB pod takes some 1.4 KB;
 * with another pod's JSON as the dictionary, 120–240 B, in about 20 µs each way (measured
 * on this project's machine; the same cost as decoding the JSON once). The history is read
 * only by watches that resume from an older resourceVersion, which are few, so the
 * inflate on those reads is cheap against keeping 75 s of changes (up to 100 Ki of them)
 * as plain strings: at 10,000 pods the plain history was a third of the control process's
 * live heap.
 *
 * The dictionary is the first JSON the codec packs. When entries start to compress
 * poorly (the resource's objects changed shape, or the first one was unusual), the next
 * JSON packed becomes the dictionary, at most once per REFRESH_AFTER packs. Every packed
 * value keeps a reference to the dictionary it was made with, so an old dictionary lives
 * exactly as long as the history that needs it.
 *
 * Kubernetes has no counterpart: kube-apiserver's watch cache keeps its history decoded
 * (watchCacheEvent) and bounds it by count and age only.
 */
import { deflateRawSync, inflateRawSync, type ZlibOptions } from 'node:zlib';

/** One JSON text, deflated: `bytes` as a one-byte (latin1) string, and the dictionary used. */
export interface PackedJson {
  readonly bytes: string;
  readonly dictionary: Buffer;
}

/** Values shorter than this (UTF-16 code units) are kept as they are: packing them saves little. */
export const MIN_PACKED_LENGTH = 512;
/** Packs between two dictionary changes, at the least. */
const REFRESH_AFTER = 1000;
/** A packed value larger than this share of its JSON counts as a poor fit of the dictionary. */
const POOR_RATIO = 0.25;
/** A dictionary longer than the window is used only for its end (zlib's rule); keep it at that. */
const WINDOW_BITS = 14;
const MAX_DICTIONARY = 1 << WINDOW_BITS;
const DEFLATE: ZlibOptions = { level: 6, windowBits: WINDOW_BITS, memLevel: 6, chunkSize: 4096 };

export class HistoryCodec {
  private dictionary: Buffer | undefined;
  private packsSinceRefresh = 0;
  private poorFit = false;

  /**
   * The JSON text `json`, packed; undefined when it is shorter than MIN_PACKED_LENGTH (keep
   * the string). `json` must be well-formed UTF-16 (JSON.stringify's output is), so that
   * its UTF-8 bytes give it back exactly.
   */
  pack(json: string): PackedJson | undefined {
    if (json.length < MIN_PACKED_LENGTH) return undefined;
    const raw = Buffer.from(json, 'utf8');
    if (this.dictionary === undefined || (this.poorFit && this.packsSinceRefresh >= REFRESH_AFTER)) {
      // A copy of the end: `raw` is itself a slice of a larger allocation for short values.
      this.dictionary = Buffer.from(raw.subarray(Math.max(0, raw.length - MAX_DICTIONARY)));
      this.packsSinceRefresh = 0;
      this.poorFit = false;
    }
    const dictionary = this.dictionary;
    const deflated = deflateRawSync(raw, { ...DEFLATE, dictionary });
    this.packsSinceRefresh++;
    if (deflated.length > raw.length * POOR_RATIO) this.poorFit = true;
    // latin1: one byte per character, so the string is as long as the bytes and owns them
    // (a Buffer from zlib is a view of its whole output chunk).
    return { bytes: deflated.toString('latin1'), dictionary };
  }

  /** The JSON text that pack() was given. @throws Error when `packed` is corrupt (a bug). */
  static unpack(packed: PackedJson): string {
    return inflateRawSync(Buffer.from(packed.bytes, 'latin1'), {
      windowBits: WINDOW_BITS,
      dictionary: packed.dictionary,
    }).toString('utf8');
  }
}
