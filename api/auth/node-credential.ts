/**
 * The node credential exchange's wire contract, shared by the API server
 * (control/apiserver/auth/node-credential.ts serves it, control/apiserver/server.ts routes
 * it) and the agent (agent/kubelet/bootstrap.ts calls it): the two paths a joining agent
 * uses before it has a credential of its own. The exchange itself is described in the
 * server's node-credential.ts; in short, kubelet TLS bootstrap folded into one call.
 *
 * 1. `GET CA_CERTS_PATH`, anonymous: the cluster CA as PEM (k3s's `/cacerts`); the join
 *    token's CA hash pins it.
 * 2. `POST NODE_CREDENTIAL_PATH` with the bootstrap token as `Authorization: Bearer`, body
 *    `{"csr": "<PEM>"}`; answer 201 `{"certificate": "<PEM>", "ca": "<PEM>"}`.
 */

/** The path an agent POSTs its certificate request to. */
export const NODE_CREDENTIAL_PATH = '/k8ts/v1/node-credential';
/** The path serving the cluster CA to anyone (k3s's /cacerts); the join token's hash pins it. */
export const CA_CERTS_PATH = '/cacerts';
