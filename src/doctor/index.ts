export { diagnose, hasProblem, FILL_PROBLEM_RATIO, TCP_ESTABLISHED_ADVISED, UDP_TIMEOUT_ADVISED, UDP_STREAM_TIMEOUT_ADVISED } from './findings.js';
export { parseConntrackStat, sumMetric } from './proc-stat.js';
export { IPVS_SYSCTLS, NETFILTER_SYSCTLS, type AgentReading, type CpuCounters, type DoctorReadings, type Finding, type StaleReading } from './readings.js';
