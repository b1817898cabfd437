/**
 * Jobs: NAME STATUS COMPLETIONS DURATION AGE, wide CONTAINERS IMAGES SELECTOR (printJob);
 * CronJobs: NAME SCHEDULE TIMEZONE SUSPEND ACTIVE LAST SCHEDULE AGE, wide CONTAINERS
 * IMAGES SELECTOR (printCronJob). Kubernetes' pkg/printers/internalversion/printers.go.
 */
import type { KubeObject } from '../../../api/object.js';
import {
  containerCells,
  formatLabelSelector,
  humanDuration,
  parseTime,
  since,
  type LabelSelectorWire,
} from './format.js';
import {
  AGE_COLUMN,
  NAME_COLUMN,
  column,
  nameOf,
  workloadColumns,
  type PrintedRow,
  type TablePrinter,
} from './printer.js';

interface JobSpecWire {
  completions?: number | null;
  parallelism?: number;
  selector?: LabelSelectorWire;
  template?: { spec?: { containers?: { name?: string; image?: string }[] } };
}

interface JobWire extends KubeObject {
  spec?: JobSpecWire;
  status?: {
    succeeded?: number;
    startTime?: string;
    completionTime?: string;
    conditions?: { type?: string; status?: string }[];
  };
}

function hasCondition(job: JobWire, type: string): boolean {
  return (job.status?.conditions ?? []).some((c) => c.type === type && c.status === 'True');
}

/** The STATUS cell: the first of Complete, Failed, Terminating, Suspended, FailureTarget, SuccessCriteriaMet, else Running. */
function jobStatus(job: JobWire): string {
  if (hasCondition(job, 'Complete')) return 'Complete';
  if (hasCondition(job, 'Failed')) return 'Failed';
  if (job.metadata?.deletionTimestamp) return 'Terminating';
  if (hasCondition(job, 'Suspended')) return 'Suspended';
  if (hasCondition(job, 'FailureTarget')) return 'FailureTarget';
  if (hasCondition(job, 'SuccessCriteriaMet')) return 'SuccessCriteriaMet';
  return 'Running';
}

function printJob(obj: KubeObject, now: Date): PrintedRow {
  const job = obj as JobWire;
  const spec = job.spec ?? {};
  const succeeded = job.status?.succeeded ?? 0;
  let completions: string;
  if (spec.completions !== undefined && spec.completions !== null)
    completions = `${succeeded}/${spec.completions}`;
  else if ((spec.parallelism ?? 0) > 1) completions = `${succeeded}/1 of ${spec.parallelism}`;
  else completions = `${succeeded}/1`;
  const start = parseTime(job.status?.startTime);
  const end = parseTime(job.status?.completionTime);
  const duration = start === undefined ? '' : humanDuration((end ?? now.getTime()) - start);
  const { names, images } = containerCells(spec.template?.spec?.containers);
  return {
    cells: [
      nameOf(job),
      jobStatus(job),
      completions,
      duration,
      since(job.metadata?.creationTimestamp, now),
      names,
      images,
      formatLabelSelector(spec.selector),
    ],
  };
}

export const jobPrinter: TablePrinter = {
  columns: [
    NAME_COLUMN,
    column('Status', 'string', 'Status of the job.'),
    column('Completions', 'string', 'The completion status of the job.'),
    column('Duration', 'string', 'Time required to complete the job.'),
    AGE_COLUMN,
    ...workloadColumns('job'),
  ],
  row: printJob,
};

interface CronJobWire extends KubeObject {
  spec?: {
    schedule?: string;
    timeZone?: string;
    suspend?: boolean;
    jobTemplate?: { spec?: JobSpecWire };
  };
  status?: { active?: unknown[]; lastScheduleTime?: string };
}

function printCronJob(obj: KubeObject, now: Date): PrintedRow {
  const cj = obj as CronJobWire;
  const spec = cj.spec ?? {};
  const jobSpec = spec.jobTemplate?.spec ?? {};
  const { names, images } = containerCells(jobSpec.template?.spec?.containers);
  return {
    cells: [
      nameOf(cj),
      spec.schedule ?? '',
      spec.timeZone ?? '<none>',
      spec.suspend === true ? 'True' : 'False',
      (cj.status?.active ?? []).length,
      cj.status?.lastScheduleTime ? since(cj.status.lastScheduleTime, now) : '<none>',
      since(cj.metadata?.creationTimestamp, now),
      names,
      images,
      jobSpec.selector ? formatLabelSelector(jobSpec.selector) : '<none>',
    ],
  };
}

export const cronJobPrinter: TablePrinter = {
  columns: [
    NAME_COLUMN,
    column('Schedule', 'string', 'The schedule for running the job, in Cron format.'),
    column('Timezone', 'string', 'The time zone name for the given schedule.'),
    column('Suspend', 'boolean', 'Whether subsequent executions are suspended.'),
    column('Active', 'integer', 'The number of pointers to currently running jobs.'),
    column('Last Schedule', 'string', 'The last time the job was successfully scheduled.'),
    AGE_COLUMN,
    ...workloadColumns('cron job'),
  ],
  row: printCronJob,
};
