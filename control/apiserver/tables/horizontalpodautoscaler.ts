/**
 * HorizontalPodAutoscalers: NAME REFERENCE TARGETS MINPODS MAXPODS REPLICAS AGE
 * (printHorizontalPodAutoscaler and formatHPAMetrics of pkg/printers/internalversion:
 * TARGETS as `cpu: 12%/50%`, `memory: 10Mi/100Mi`, `<unknown>` before the first
 * measurement, at most two metrics then `+ N more...`).
 */
import type { HorizontalPodAutoscaler } from '../../../api/types.js';
import type { KubeObject } from '../../../api/object.js';
import { hpaFromV1 } from '../strategies/horizontalpodautoscalers-v1.js';
import { since } from './format.js';
import { AGE_COLUMN, NAME_COLUMN, column, nameOf, type PrintedRow, type TablePrinter } from './printer.js';

type Spec = NonNullable<HorizontalPodAutoscaler['spec']['metrics']>[number];
type Status = NonNullable<NonNullable<HorizontalPodAutoscaler['status']>['currentMetrics']>[number];

/** One metric's `current/target` cell part, as formatHPAMetrics writes it. */
function formatMetric(spec: Spec, status: Status | undefined): string {
  type Source = {
    name?: string;
    target?: { averageValue?: string; averageUtilization?: number; value?: string };
    metric?: { name?: string };
  };
  type Current = { current?: { averageValue?: string; averageUtilization?: number; value?: string } };
  const field = {
    Resource: 'resource',
    ContainerResource: 'containerResource',
    Pods: 'pods',
    Object: 'object',
    External: 'external',
  }[spec.type];
  if (field === undefined) return '<unknown type>';
  const src = (spec[field] ?? {}) as Source;
  const cur = (status as Record<string, unknown> | undefined)?.[field] as Current | undefined;
  switch (spec.type) {
    case 'Resource':
    case 'ContainerResource': {
      const name = src.name ?? '';
      if (src.target?.averageValue !== undefined) {
        return `${name}: ${cur?.current?.averageValue ?? '<unknown>'}/${src.target.averageValue}`;
      }
      const current =
        cur?.current?.averageUtilization !== undefined ? `${cur.current.averageUtilization}%` : '<unknown>';
      const target =
        src.target?.averageUtilization !== undefined ? `${src.target.averageUtilization}%` : '<auto>';
      return `${name}: ${current}/${target}`;
    }
    case 'Pods':
      return `${cur?.current?.averageValue ?? '<unknown>'}/${src.target?.averageValue ?? ''}`;
    default: {
      const t = src.target ?? {};
      if (t.averageValue !== undefined)
        return `${cur?.current?.averageValue ?? '<unknown>'}/${t.averageValue} (avg)`;
      return `${cur?.current?.value ?? '<unknown>'}/${t.value ?? ''}`;
    }
  }
}

/** formatHPAMetrics: `<none>` without metrics; the first two, then `+ N more...`. */
export function formatHPAMetrics(
  specs: readonly Spec[] | undefined,
  statuses: readonly Status[] | undefined,
): string {
  if (!specs || specs.length === 0) return '<none>';
  const items = specs.map((s, i) => formatMetric(s, statuses?.[i]));
  const shown = items.slice(0, 2).join(', ');
  return items.length > 2 ? `${shown} + ${items.length - 2} more...` : shown;
}

function printHPA(obj: KubeObject, now: Date): PrintedRow {
  // Printed from the v2 form, as upstream prints the internal type whatever version is asked.
  const hpa = (obj.apiVersion === 'autoscaling/v1' ? hpaFromV1(obj) : obj) as HorizontalPodAutoscaler;
  const spec = hpa.spec ?? ({} as Partial<HorizontalPodAutoscaler['spec']>);
  const ref = spec.scaleTargetRef;
  return {
    cells: [
      nameOf(hpa),
      `${ref?.kind ?? ''}/${ref?.name ?? ''}`,
      formatHPAMetrics(spec.metrics, hpa.status?.currentMetrics),
      spec.minReplicas === undefined ? '<unset>' : String(spec.minReplicas),
      spec.maxReplicas ?? 0,
      hpa.status?.currentReplicas ?? 0,
      since(hpa.metadata?.creationTimestamp, now),
    ],
  };
}

export const horizontalPodAutoscalerPrinter: TablePrinter = {
  columns: [
    NAME_COLUMN,
    // Every column is typed `string` upstream, the counts too (their cells are integers).
    column(
      'Reference',
      'string',
      'scaleTargetRef points to the target resource to scale, and is used to the pods for which metrics should be collected, as well as to actually change the replica count.',
    ),
    column(
      'Targets',
      'string',
      'metrics contains the specifications for which to use to calculate the desired replica count (the maximum replica count across all metrics will be used).',
    ),
    column(
      'MinPods',
      'string',
      'minReplicas is the lower limit for the number of replicas to which the autoscaler can scale down.',
    ),
    column(
      'MaxPods',
      'string',
      'maxReplicas is the upper limit for the number of replicas to which the autoscaler can scale up. It cannot be less that minReplicas.',
    ),
    column(
      'Replicas',
      'string',
      'currentReplicas is current number of replicas of pods managed by this autoscaler, as last seen by the autoscaler.',
    ),
    AGE_COLUMN,
  ],
  row: printHPA,
};
