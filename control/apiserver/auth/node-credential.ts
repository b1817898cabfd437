/**
 * The node credential exchange: a joining agent, authenticated by a bootstrap token
 * (group system:bootstrappers, allowed `post` on NODE_CREDENTIAL_PATH by RBAC), sends a
 * PKCS#10 request for `CN=system:node:<name>, O=system:nodes` made with a key that never
 * leaves it, and gets back a client certificate signed by the cluster CA.
 *
 * This is kubelet TLS bootstrap (a CertificateSigningRequest for the
 * kubernetes.io/kube-apiserver-client-kubelet signer, auto-approved for bootstrappers by
 * kube-controller-manager's csrapproving controller) folded into one synchronous call:
 * the security properties are the same — the token only ever buys a node certificate,
 * the private key stays on the node — without serving the certificates.k8s.io API and
 * running an approver and a signer controller, which k8ts does not need otherwise.
 *
 * Request body: `{"csr": "<PEM>"}`. Answer 201: `{"certificate": "<PEM>", "ca": "<PEM>"}`.
 */
import type { KeyPair } from '../../../api/tls/certs.js';
import { parseCertificateRequest, signLeaf } from '../../../api/tls/certs.js';
import { isDNS1123Subdomain } from '../../../api/meta/validation.js';
import { ApiError, badRequest } from '../status.js';
import { NODE_USER_PREFIX, SYSTEM_NODES } from '../../../api/auth/user.js';

/** The answer of the exchange. */
export interface NodeCredential {
  certificate: string;
  ca: string;
}

/**
 * Checks and signs a node's certificate request: its CN must be `system:node:<name>` with
 * a valid node name (a DNS subdomain) and its only O `system:nodes`, and no Node of that
 * name may exist yet (`nodeExists`).
 * @throws ApiError 400 naming what is wrong with the request; 409 AlreadyExists for an
 *   existing node.
 */
export async function signNodeCredential(
  ca: KeyPair,
  body: unknown,
  nodeExists: (name: string) => Promise<boolean> = async () => false,
): Promise<NodeCredential> {
  const csrPem = typeof body === 'object' && body !== null ? (body as { csr?: unknown }).csr : undefined;
  if (typeof csrPem !== 'string' || csrPem === '')
    throw badRequest('csr: Required value: a PEM certificate request');
  let req;
  try {
    req = await parseCertificateRequest(csrPem);
  } catch (err) {
    throw badRequest(`csr: Invalid value: ${(err as Error).message}`);
  }
  if (!req.commonName.startsWith(NODE_USER_PREFIX))
    throw badRequest(
      `csr: Invalid value: the common name must be ${NODE_USER_PREFIX}<node name>, got "${req.commonName}"`,
    );
  const node = req.commonName.slice(NODE_USER_PREFIX.length);
  const problems = isDNS1123Subdomain(node);
  if (problems.length > 0)
    throw badRequest(`csr: Invalid value: node name "${node}": ${problems.join('; ')}`);
  if (req.organizations.length !== 1 || req.organizations[0] !== SYSTEM_NODES)
    throw badRequest(`csr: Invalid value: the organization must be exactly ${SYSTEM_NODES}`);
  // A join token registers new nodes only: the identity of a node that exists belongs to
  // the host that registered it (which keeps its credential in its data dir), or anyone
  // holding the token could take over that node's tunnel — its logs, exec and
  // port-forward streams. (k3s refuses the same with its per-node password.)
  if (await nodeExists(node))
    throw new ApiError(
      409,
      'AlreadyExists',
      `nodes "${node}" already exists: a join token registers new nodes only; start the agent with the data dir that holds its credential, or delete the Node (kubectl delete node ${node}) to register this host again`,
      { name: node, kind: 'nodes' },
    );
  const { cert } = await signLeaf(
    ca,
    { usage: 'client', user: req.commonName, groups: [SYSTEM_NODES] },
    { publicKey: req.publicKey },
  );
  return { certificate: cert, ca: ca.cert };
}
