/** The body of `conndrain doctor` (cli/commands/doctor.ts loads it in its action). */
import { diagnose, hasProblem, type Finding } from '../../src/doctor/index.js';
import { CliExit } from '../exit.js';
import { gatherReadings } from './readings.js';
import { currentNetns, rerunInNetns } from './netns-reexec.js';

export interface DoctorFlags {
  netns?: string;
  json?: boolean;
  agentUrl?: string;
  agent?: boolean;
  endpoints?: string;
}

export async function runDoctor(flags: DoctorFlags): Promise<void> {
  if (flags.netns !== undefined && currentNetns() === undefined) {
    let code: number;
    try {
      code = await rerunInNetns(flags.netns);
    } catch (error) {
      throw new CliExit(2, `conndrain doctor: cannot enter netns ${flags.netns}: ${error instanceof Error ? error.message : String(error)}`);
    }
    throw new CliExit(code);
  }
  const readings = await gatherReadings({ agentUrl: flags.agent === false ? undefined : flags.agentUrl, endpoints: flags.endpoints });
  const findings = diagnose(readings);
  const netns = currentNetns() ?? null;
  if (flags.json === true) {
    process.stdout.write(`${JSON.stringify({ netns, problems: findings.filter((f) => f.problem).length, findings }, null, 2)}\n`);
  } else {
    process.stdout.write(formatFindings(findings, netns));
  }
  if (hasProblem(findings)) throw new CliExit(1);
}

function formatFindings(findings: readonly Finding[], netns: string | null): string {
  const width = Math.max(...findings.map((f) => f.check.length));
  const lines = findings.map((f) => `${f.problem ? 'PROBLEM' : 'ok     '}  ${f.check.padEnd(width)}  ${f.value === null ? '?' : String(f.value)}\n         ${f.why}`);
  const problems = findings.filter((f) => f.problem).length;
  const where = netns === null ? 'this node' : `netns ${netns}`;
  return `conndrain doctor: ${where}\n${lines.join('\n')}\n${problems === 0 ? 'no problem found' : `${problems} problem(s) found`}\n`;
}
