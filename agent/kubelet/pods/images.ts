/**
 * Making sure a container's image is present before it is created: the kubelet's image
 * manager (pkg/kubelet/images/image_manager.go, EnsureImageExists).
 *
 * - The pull policy is the container's `imagePullPolicy`, defaulted as Kubernetes does:
 *   `Always` for an image tagged `latest` or with neither tag nor digest, else
 *   `IfNotPresent`.
 * - A reference that does not parse → InvalidImageName (event InspectFailed).
 * - `Never` and absent → ErrImageNeverPull (event ErrImageNeverPull).
 * - Present and not `Always` → event Pulled "Container image ... already present on machine".
 * - Otherwise pull, unless a pull of this image for this pod failed less than the
 *   backoff ago (10 s doubling to 300 s) → ImagePullBackOff (event BackOff); events
 *   Pulling, then Pulled "Successfully pulled image ... in Xs" or Failed; a failed pull →
 *   ErrImagePull.
 * Every failure also records a Warning `Failed` event "Error: <reason>", as the kubelet does.
 */
import type { Logger } from '../../../api/log.js';
import type { Clock } from '../../../api/clock.js';
import type { EventRecorder, EventTarget } from '../../../api/client/events.js';
import type { ImageService } from '../../../cri/index.js';
import { isCriError } from '../../../cri/index.js';
import { parseImageReference } from '../../../cri/index.js';
import { Backoff } from './backoff.js';
import { ContainerStartError } from './errors.js';
import type { KubeletContainer, KubeletPod } from './types.js';
import { errorMessage } from '../../../api/errors.js';

/** The effective pull policy of a container (SetDefaults_Container's rule when unset). */
export function pullPolicyOf(container: KubeletContainer): 'Always' | 'IfNotPresent' | 'Never' {
  if (container.imagePullPolicy) return container.imagePullPolicy;
  return defaultPullPolicy(container.image ?? '');
}

/**
 * Kubernetes' default pull policy for `image`: `Always` for tag `latest` or no tag and no
 * digest, else `IfNotPresent`. A reference that does not parse gets `IfNotPresent` (it
 * fails later as InvalidImageName).
 */
export function defaultPullPolicy(image: string): 'Always' | 'IfNotPresent' {
  try {
    const ref = parseImageReference(image);
    if (ref.tag === 'latest' || (ref.tag === undefined && ref.digest === undefined)) return 'Always';
    return 'IfNotPresent';
  } catch {
    return 'IfNotPresent';
  }
}

/** Settings of an ImageManager. */
export interface ImageManagerConfig {
  images: ImageService;
  recorder: Pick<EventRecorder, 'event'>;
  clock: Clock;
  logger: Logger;
  /** First pull backoff, ms (default 10 000). */
  backoffInitialMs?: number;
  /** Longest pull backoff, ms (default 300 000). */
  backoffMaxMs?: number;
}

/** See the file comment. */
export class ImageManager {
  private readonly cfg: ImageManagerConfig;
  /** Keyed `<pod uid>_<image>`, as the kubelet's. */
  readonly backoff: Backoff;

  constructor(cfg: ImageManagerConfig) {
    this.cfg = cfg;
    this.backoff = new Backoff({
      clock: cfg.clock,
      initialMs: cfg.backoffInitialMs ?? 10_000,
      maxMs: cfg.backoffMaxMs ?? 300_000,
    });
  }

  /**
   * Resolves with the image's id once `container.image` is present per its pull policy.
   * `ref` is the container's object reference for events (fieldPath `spec.containers{name}`).
   * @throws ContainerStartError InvalidImageName, ErrImageNeverPull, ImagePullBackOff or
   *   ErrImagePull; CriError Unavailable when the runtime is down.
   */
  async ensureImageExists(pod: KubeletPod, container: KubeletContainer, ref: EventTarget): Promise<string> {
    const { recorder, images, clock } = this.cfg;
    const image = container.image ?? '';
    const fail = (reason: ContainerStartError['reason'], message: string, cause?: unknown): never => {
      recorder.event(ref, 'Warning', 'Failed', `Error: ${reason}`);
      throw new ContainerStartError(reason, message, { cause });
    };
    try {
      parseImageReference(image);
    } catch (err) {
      const message = `Failed to apply default image tag "${image}": couldn't parse image name "${image}": invalid reference format`;
      recorder.event(ref, 'Warning', 'InspectFailed', message);
      return fail('InvalidImageName', message, err);
    }
    const policy = pullPolicyOf(container);
    const present = await images.imageStatus(image);
    if (present && policy !== 'Always') {
      recorder.event(ref, 'Normal', 'Pulled', `Container image "${image}" already present on machine`);
      return present.id;
    }
    if (policy === 'Never') {
      const message = `Container image "${image}" is not present with pull policy of Never`;
      recorder.event(ref, 'Warning', 'ErrImageNeverPull', message);
      return fail('ErrImageNeverPull', message);
    }
    const key = `${pod.metadata.uid}_${image}`;
    if (this.backoff.remainingSinceUpdate(key) > 0) {
      const message = `Back-off pulling image "${image}"`;
      recorder.event(ref, 'Normal', 'BackOff', message);
      return fail('ImagePullBackOff', message);
    }
    recorder.event(ref, 'Normal', 'Pulling', `Pulling image "${image}"`);
    this.cfg.logger.info('pulling image', { pod: `${pod.metadata.namespace}/${pod.metadata.name}`, image });
    const started = clock.now();
    let id: string;
    try {
      id = await images.pullImage(image);
    } catch (err) {
      if (isCriError(err, 'Unavailable')) throw err;
      this.backoff.next(key);
      const why = errorMessage(err);
      const reason = isCriError(err, 'InvalidArgument') ? 'InvalidImageName' : 'ErrImagePull';
      recorder.event(ref, 'Warning', 'Failed', `Failed to pull image "${image}": ${why}`);
      return fail(reason, why, err);
    }
    this.backoff.reset(key);
    const secs = ((clock.now() - started) / 1000).toFixed(3);
    const size = (await images.imageStatus(image).catch(() => undefined))?.size;
    recorder.event(
      ref,
      'Normal',
      'Pulled',
      `Successfully pulled image "${image}" in ${secs}s (${secs}s including waiting)` +
        (size !== undefined ? `. Image size: ${size} bytes.` : ''),
    );
    return id;
  }
}
