/**
 * The root CA publisher (kube-controller-manager's `root-ca-cert-publisher`): the
 * ConfigMap `kube-root-ca.crt` with the cluster CA in every namespace. See controller.ts.
 */
import type { ControllerFactory } from '../context.js';
import { RootCACertPublisher } from './controller.js';

export { RootCACertPublisher, ROOT_CA_CONFIGMAP, ROOT_CA_KEY, DESCRIPTION_ANNOTATION } from './controller.js';

/** Builds the `root-ca-cert-publisher` controller from the shared context (CA: config.rootCACert). */
export const rootCACertPublisherController: ControllerFactory = (ctx) => new RootCACertPublisher(ctx);
