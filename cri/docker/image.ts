/**
 * The Docker adapter's ImageService: the engine's images under CRI's names. References
 * are checked by CRI's grammar first (malformed → InvalidArgument, ../reference.ts); a
 * pull is Docker's `images/create` progress stream, followed to its end (pull.ts), and
 * fails ImagePullFailed unless the engine is unreachable (Unavailable).
 */
import type { Readable } from 'node:stream';
import type { AuthConfig, Image, PullProgress } from '../api.js';
import { CriError } from '../errors.js';
import { familiarRepository, parseImageReference } from '../reference.js';
import { imageUser } from './convert.js';
import { toCriError } from './errors.js';
import type { DockerObjects } from './objects.js';
import { followPull } from './pull.js';

/** ImageService on one engine. */
export class DockerImages {
  constructor(private readonly o: DockerObjects) {}

  /** Every image of the engine, without Docker's `<none>` placeholders. */
  async list(): Promise<Image[]> {
    const images = await this.o.call('list images', (e) => e.listImages());
    return images.map((i) => ({
      id: i.Id,
      repoTags: (i.RepoTags ?? []).filter((t) => t !== '<none>:<none>'),
      repoDigests: (i.RepoDigests ?? []).filter((d) => d !== '<none>@<none>'),
      size: i.Size,
    }));
  }

  /** The image `image` names, with the uid or username its config runs as; undefined when absent. */
  async status(image: string): Promise<Image | undefined> {
    parseImageReference(image);
    try {
      const i = await this.o.call(`inspect image ${image}`, (e) => e.inspectImage(image));
      return {
        id: i.Id,
        repoTags: i.RepoTags ?? [],
        repoDigests: i.RepoDigests ?? [],
        size: i.Size,
        ...imageUser(i.Config?.User),
      };
    } catch (err) {
      if (err instanceof CriError && err.code === 'NotFound') return undefined;
      throw err;
    }
  }

  /**
   * Pulls `image`, reporting progress to `onProgress`, with `auth` as Docker's AuthConfig
   * (the `X-Registry-Auth` header, as dockershim and cri-dockerd map CRI's).
   * @returns the pulled image's id.
   * @throws CriError InvalidArgument (malformed reference), Unavailable (no engine),
   *   ImagePullFailed (anything else, with Docker's message).
   */
  async pull(image: string, onProgress?: (p: PullProgress) => void, auth?: AuthConfig): Promise<string> {
    const ref = parseImageReference(image);
    const what = `pull ${image}`;
    const asPullError = (err: unknown): CriError => {
      const e = toCriError(err, what);
      return e.code === 'Unavailable' ? e : new CriError('ImagePullFailed', e.message, { cause: err });
    };
    let stream: Readable;
    try {
      this.o.checkOpen();
      stream = await this.o.engine.pullImage({
        fromImage: familiarRepository(ref),
        tag: ref.digest ?? ref.tag ?? 'latest',
        ...(auth ? { authconfig: dockerAuth(auth) } : {}),
      });
    } catch (err) {
      throw asPullError(err);
    }
    await followPull(stream, what, onProgress);
    const pulled = await this.status(image);
    if (!pulled) {
      throw new CriError('ImagePullFailed', `${what}: docker reported success but has no such image`);
    }
    return pulled.id;
  }

  /** Removes `image`; an absent one is done. */
  async remove(image: string): Promise<void> {
    parseImageReference(image);
    try {
      await this.o.call(`remove image ${image}`, (e) => e.removeImage(image));
    } catch (err) {
      if (err instanceof CriError && err.code === 'NotFound') return;
      throw err;
    }
  }
}

/**
 * CRI's AuthConfig as Docker's: `auth` (base64 `user:password`) split into username and
 * password when those are unset, since the engine reads only the latter.
 */
export function dockerAuth(a: AuthConfig): {
  username?: string;
  password?: string;
  serveraddress?: string;
  identitytoken?: string;
  registrytoken?: string;
} {
  let { username, password } = a;
  if (!username && !password && a.auth) {
    const plain = Buffer.from(a.auth, 'base64').toString('utf8');
    const colon = plain.indexOf(':');
    if (colon > 0) [username, password] = [plain.slice(0, colon), plain.slice(colon + 1)];
  }
  const out: ReturnType<typeof dockerAuth> = {};
  if (username) out.username = username;
  if (password) out.password = password;
  if (a.serverAddress) out.serveraddress = a.serverAddress;
  if (a.identityToken) out.identitytoken = a.identityToken;
  if (a.registryToken) out.registrytoken = a.registryToken;
  return out;
}
