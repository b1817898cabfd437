/**
 * The containerd adapter's ImageService, each one RPC as in the kubelet's CRI remote
 * image client (k8s.io/cri-client, pkg/remote_image.go). References are checked by CRI's
 * grammar first (malformed → InvalidArgument, ../reference.ts); tags and digests are
 * shown in the familiar form (convert.ts). A pull gets 10 minutes and fails
 * ImagePullFailed unless the runtime is unreachable (Unavailable) or refuses the
 * reference (InvalidArgument); removing an image that is gone succeeds.
 */
import type { AuthConfig, Image, PullProgress } from '../api.js';
import { errorMessage } from '../../api/errors.js';
import { CriError } from '../errors.js';
import { parseImageReference } from '../reference.js';
import type { Message } from './client.js';
import { imageFrom } from './convert.js';
import type { ContainerdObjects } from './objects.js';

/** A PullImage RPC's deadline, ms. */
const PULL_TIMEOUT_MS = 10 * 60_000;

/** ImageService on one runtime connection. */
export class ContainerdImages {
  constructor(private readonly o: ContainerdObjects) {}

  /** ListImages: every image of the runtime (its CRI namespace, `k8s.io` on containerd). */
  async list(): Promise<Image[]> {
    const r = await this.o.imageCall('ListImages', {}, 'list images');
    return ((r.images as Message[] | undefined) ?? []).map(imageFrom);
  }

  /** ImageStatus: the image `image` names, with its uid or username; undefined when absent. */
  async status(image: string): Promise<Image | undefined> {
    parseImageReference(image);
    const r = await this.o.imageCall('ImageStatus', { image: { image }, verbose: false }, `image ${image}`);
    return r.image ? imageFrom(r.image as Message) : undefined;
  }

  /**
   * PullImage, reporting `Pulling …` and `Pulled …` to `onProgress`, with `auth` as the
   * request's AuthConfig (containerd's CRI sends it to the registry the image names); the
   * image's id.
   * @throws CriError ImagePullFailed (the runtime's words); InvalidArgument; Unavailable.
   */
  async pull(image: string, onProgress?: (p: PullProgress) => void, auth?: AuthConfig): Promise<string> {
    parseImageReference(image);
    const what = `pull ${image}`;
    onProgress?.({ status: `Pulling ${image}` });
    let r: Message;
    try {
      r = await this.o.imageCall(
        'PullImage',
        { image: { image }, ...(auth ? { auth: { ...auth } } : {}) },
        what,
        PULL_TIMEOUT_MS,
      );
    } catch (err) {
      if (err instanceof CriError && (err.code === 'Unavailable' || err.code === 'InvalidArgument'))
        throw err;
      throw new CriError('ImagePullFailed', errorMessage(err), { cause: err });
    }
    onProgress?.({ status: `Pulled ${image}` });
    const pulled = await this.status(image);
    return pulled?.id ?? String(r.imageRef);
  }

  /** RemoveImage; an image that is gone is removed. */
  async remove(image: string): Promise<void> {
    parseImageReference(image);
    await this.o.ignoreNotFound(
      this.o.imageCall('RemoveImage', { image: { image } }, `remove image ${image}`),
    );
  }
}
