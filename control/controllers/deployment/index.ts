/**
 * control/controllers/deployment — the Deployment controller: rolls a Deployment's pod
 * template out through ReplicaSets named `<deployment>-<pod-template-hash>` (RollingUpdate
 * within maxSurge/maxUnavailable, or Recreate), keeps revisions for `kubectl rollout
 * history/undo`, honours pause, scales proportionally, cleans up beyond
 * revisionHistoryLimit, and reports the Progressing and Available conditions that
 * `kubectl rollout status` follows (Kubernetes' pkg/controller/deployment).
 *
 * Files: controller.ts (handlers + reconcile), sync.ts (shared steps and status),
 * rolling.ts, recreate.ts, progress.ts (Progressing condition and deadline), replicasets.ts
 * (pure ReplicaSet arithmetic), fenceposts.ts (maxSurge/maxUnavailable), annotations.ts,
 * conditions.ts, hash.ts (pod-template-hash).
 */
import type { ControllerFactory } from '../context.js';
import { DeploymentController } from './controller.js';

export { DeploymentController, DEPLOYMENT_CONTROLLER_NAME } from './controller.js';

/** Builds the Deployment controller (`deployment`) from the shared controller context. */
export const deploymentController: ControllerFactory = (ctx) => new DeploymentController(ctx);
