/**
 * A CRI v1 gRPC client: the `runtime.v1` RuntimeService and ImageService of the vendored
 * api.proto (kubernetes/cri-api), over the runtime's unix socket, with @grpc/grpc-js and
 * @grpc/proto-loader. Messages are plain objects with camelCase fields as proto-loader
 * gives them (int64 as decimal strings, enums as their names, bytes as Buffers, every field
 * present with its default).
 *
 * Every call has a deadline, and every failure becomes a CriError (criErrorOf): the gRPC
 * status code where it says enough (NOT_FOUND → NotFound, UNAVAILABLE → Unavailable, ...),
 * and the runtime's words where containerd answers UNKNOWN for a state or timeout error.
 * UNIMPLEMENTED (an RPC this runtime predates) is Internal with a message naming the RPC:
 * the caller decides, nothing throws past it.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { CriError, type CriErrorCode } from '../errors.js';

/** containerd's default CRI endpoint. */
export const DEFAULT_CRI_ENDPOINT = 'unix:///run/containerd/containerd.sock';

/** A CRI message as proto-loader decodes it (fields camelCase). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Message = Record<string, any>;

/** The vendored proto, beside this file (tsx) or in the source tree beside dist/ (tsc output). */
function protoPath(): string {
  const candidates = [
    new URL('./api.proto', import.meta.url),
    new URL('../../../cri/containerd/api.proto', import.meta.url),
  ].map((u) => fileURLToPath(u));
  const found = candidates.find((p) => existsSync(p));
  if (!found) throw new Error(`CRI api.proto not found (looked in ${candidates.join(', ')})`);
  return found;
}

let packageCache: grpc.GrpcObject | undefined;

function criPackage(): grpc.GrpcObject {
  if (!packageCache) {
    const def = protoLoader.loadSync(protoPath(), {
      keepCase: false,
      longs: String,
      enums: String,
      defaults: true,
      oneofs: true,
    });
    const runtimePkg = grpc.loadPackageDefinition(def).runtime as grpc.GrpcObject;
    packageCache = runtimePkg.v1 as grpc.GrpcObject;
  }
  return packageCache;
}

const UNIX_PREFIX = /^unix:(\/\/)?/;

/** The gRPC target of a CRI endpoint: `unix:///path`, `unix:/path` or a bare `/path`. */
export function grpcTarget(endpoint: string): string {
  if (endpoint.startsWith('/')) return `unix://${endpoint}`;
  if (UNIX_PREFIX.test(endpoint)) return `unix://${endpoint.replace(UNIX_PREFIX, '')}`;
  throw new Error(`CRI endpoint ${JSON.stringify(endpoint)}: only unix sockets are supported`);
}

/** The socket path an endpoint names (for messages). */
export function socketPathOf(endpoint: string): string {
  return endpoint.replace(UNIX_PREFIX, '');
}

/** The gRPC status of a call's error, when it has one. */
function grpcStatusOf(err: unknown): { code: grpc.status; details: string } | undefined {
  if (typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'number') {
    const details = 'details' in err && typeof err.details === 'string' ? err.details : String(err);
    // grpc-js ends a connection failure's details with an empty "Resolution note: ".
    return { code: err.code as grpc.status, details: details.replace(/\s*Resolution note:\s*$/, '') };
  }
  return undefined;
}

/**
 * The CriError for a failed call `rpc` (`what` says what it was about). containerd answers
 * UNKNOWN for some errors the kubelet tells apart by their words: a container not in the
 * state asked for (FailedPrecondition), an exec past its timeout (DeadlineExceeded).
 */
export function criErrorOf(err: unknown, rpc: string, what: string, socket: string): CriError {
  if (err instanceof CriError) return err;
  const st = grpcStatusOf(err);
  if (!st) return new CriError('Internal', `${what}: ${String(err)}`, { cause: err });
  const msg = `${what}: ${st.details}`;
  const code = ((): CriErrorCode => {
    switch (st.code) {
      case grpc.status.NOT_FOUND:
        return 'NotFound';
      case grpc.status.INVALID_ARGUMENT:
        return 'InvalidArgument';
      case grpc.status.ALREADY_EXISTS:
        return 'AlreadyExists';
      case grpc.status.FAILED_PRECONDITION:
        return 'FailedPrecondition';
      case grpc.status.DEADLINE_EXCEEDED:
        return 'DeadlineExceeded';
      case grpc.status.UNAVAILABLE:
        return 'Unavailable';
      default:
        break;
    }
    if (/timeout \S+ exceeded|context deadline exceeded/.test(st.details)) return 'DeadlineExceeded';
    if (/is reserved for|already exists/.test(st.details)) return 'AlreadyExists';
    if (/is in CONTAINER_\w+ state|is not in (running|created) state|not running/.test(st.details))
      return 'FailedPrecondition';
    return 'Internal';
  })();
  if (st.code === grpc.status.UNIMPLEMENTED) {
    return new CriError('Internal', `${what}: the runtime does not implement ${rpc} (${st.details})`, {
      cause: err,
    });
  }
  if (code === 'Unavailable') {
    return new CriError('Unavailable', `${what}: CRI runtime at ${socket} is unavailable: ${st.details}`, {
      cause: err,
    });
  }
  return new CriError(code, msg, { cause: err });
}

type Unary = (
  req: Message,
  meta: grpc.Metadata,
  opts: grpc.CallOptions,
  cb: grpc.requestCallback<Message>,
) => void;

/** One connection to a CRI runtime: both services on one channel. */
export class CriClient {
  private readonly runtime: grpc.Client;
  private readonly image: grpc.Client;
  readonly socket: string;

  constructor(
    endpoint: string,
    private readonly defaultTimeoutMs = 120_000,
  ) {
    const pkg = criPackage();
    const target = grpcTarget(endpoint);
    this.socket = socketPathOf(endpoint);
    const options: grpc.ChannelOptions = {
      'grpc.max_receive_message_length': 16 * 1024 * 1024,
      'grpc.max_send_message_length': 16 * 1024 * 1024,
    };
    const RuntimeService = pkg.RuntimeService as grpc.ServiceClientConstructor;
    const ImageService = pkg.ImageService as grpc.ServiceClientConstructor;
    this.runtime = new RuntimeService(target, grpc.credentials.createInsecure(), options);
    // The second client shares the first one's channel.
    this.image = new ImageService(target, grpc.credentials.createInsecure(), {
      ...options,
      channelOverride: this.runtime.getChannel(),
    });
  }

  /** Calls RuntimeService.`rpc`; rejects with a CriError. */
  callRuntime(rpc: string, req: Message, what: string, timeoutMs?: number): Promise<Message> {
    return this.call(this.runtime, rpc, req, what, timeoutMs);
  }

  /** Calls ImageService.`rpc`; rejects with a CriError. */
  callImage(rpc: string, req: Message, what: string, timeoutMs?: number): Promise<Message> {
    return this.call(this.image, rpc, req, what, timeoutMs);
  }

  close(): void {
    this.image.close();
    this.runtime.close();
  }

  private call(
    client: grpc.Client,
    rpc: string,
    req: Message,
    what: string,
    timeoutMs?: number,
  ): Promise<Message> {
    const method = (client as unknown as Record<string, Unary | undefined>)[rpc];
    if (typeof method !== 'function') {
      return Promise.reject(new CriError('Internal', `${what}: ${rpc} is not in the CRI v1 API`));
    }
    const deadline = new Date(Date.now() + (timeoutMs ?? this.defaultTimeoutMs));
    return new Promise<Message>((resolve, reject) => {
      method.call(client, req, new grpc.Metadata(), { deadline }, (err, res) => {
        if (err) reject(criErrorOf(err, rpc, what, this.socket));
        else resolve(res ?? {});
      });
    });
  }
}
