/**
 * What an agent's kubelet API answers on `GET /stats/summary` (through the tunnel), and
 * what the API server's metrics.k8s.io builds NodeMetrics and PodMetrics from. Shaped
 * after the kubelet's Summary API (k8s.io/kubelet/pkg/apis/stats/v1alpha1), trimmed to
 * what `kubectl top` needs, with the CPU rate already averaged over a window as
 * metrics-server does from two samples.
 */

/** CPU and memory of one node or container, over [time − windowSeconds, time]. */
export interface UsageSample {
  /** RFC 3339 time of the later sample. */
  time: string;
  /** Seconds between the two samples the CPU rate is taken from. */
  windowSeconds: number;
  /** Average CPU use over the window, nanocores (1e9 = one core busy). */
  usageNanoCores: number;
  /** Working set memory at `time`, bytes (cAdvisor's: usage minus inactive file pages). */
  workingSetBytes: number;
}

/** The Summary of one node. */
export interface StatsSummary {
  node: { nodeName: string } & UsageSample;
  pods: {
    podRef: { name: string; namespace: string; uid: string };
    containers: ({ name: string } & UsageSample)[];
  }[];
}
