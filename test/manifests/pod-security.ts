/**
 * The Pod Security Standards checks (https://kubernetes.io/docs/concepts/security/pod-security-standards/,
 * policy version "latest" as of Kubernetes 1.32), implemented over a PodSpec so the tests can
 * say which pods meet `baseline` and `restricted`. Each violation names the check and the field.
 */
import type { IContainer } from 'kubernetes-models/v1/Container';
import type { IPodSpec } from 'kubernetes-models/v1/PodSpec';

export type PodSecurityLevel = 'baseline' | 'restricted';

/** Capabilities baseline allows a container to add. */
const BASELINE_CAPABILITIES = new Set(['AUDIT_WRITE', 'CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'FSETID', 'KILL', 'MKNOD', 'NET_BIND_SERVICE', 'SETFCAP', 'SETGID', 'SETPCAP', 'SETUID', 'SYS_CHROOT']);
const SAFE_SYSCTLS = new Set(['kernel.shm_rmid_forced', 'net.ipv4.ip_local_port_range', 'net.ipv4.ip_unprivileged_port_start', 'net.ipv4.tcp_syncookies', 'net.ipv4.ping_group_range', 'net.ipv4.ip_local_reserved_ports', 'net.ipv4.tcp_keepalive_time', 'net.ipv4.tcp_fin_timeout', 'net.ipv4.tcp_keepalive_intvl', 'net.ipv4.tcp_keepalive_probes']);
const SELINUX_TYPES = new Set(['', 'container_t', 'container_init_t', 'container_kvm_t', 'container_engine_t']);
const RESTRICTED_VOLUME_SOURCES = new Set(['configMap', 'csi', 'downwardAPI', 'emptyDir', 'ephemeral', 'persistentVolumeClaim', 'projected', 'secret']);

type AnyContainer = Pick<IContainer, 'name' | 'securityContext' | 'ports'>;

function containersOf(spec: IPodSpec): AnyContainer[] {
  return [...(spec.initContainers ?? []), ...spec.containers, ...(spec.ephemeralContainers ?? [])];
}

function checkBaseline(spec: IPodSpec): string[] {
  const out: string[] = [];
  const pod = spec.securityContext;
  if (spec.hostNetwork === true) out.push('host namespaces: spec.hostNetwork=true');
  if (spec.hostPID === true) out.push('host namespaces: spec.hostPID=true');
  if (spec.hostIPC === true) out.push('host namespaces: spec.hostIPC=true');
  if (pod?.windowsOptions?.hostProcess === true) out.push('hostProcess: spec.securityContext.windowsOptions.hostProcess=true');
  for (const volume of spec.volumes ?? []) if (volume.hostPath !== undefined) out.push(`hostPath volumes: volume ${volume.name}`);
  if (pod?.seccompProfile?.type === 'Unconfined') out.push('seccomp: spec.securityContext.seccompProfile.type=Unconfined');
  if (pod?.appArmorProfile?.type === 'Unconfined') out.push('AppArmor: spec.securityContext.appArmorProfile.type=Unconfined');
  if (!SELINUX_TYPES.has(pod?.seLinuxOptions?.type ?? '') || pod?.seLinuxOptions?.user !== undefined || pod?.seLinuxOptions?.role !== undefined) out.push('SELinux: spec.securityContext.seLinuxOptions');
  for (const sysctl of pod?.sysctls ?? []) if (!SAFE_SYSCTLS.has(sysctl.name)) out.push(`sysctls: ${sysctl.name}`);
  for (const c of containersOf(spec)) {
    const sc = c.securityContext;
    const at = `container ${c.name}`;
    if (sc?.privileged === true) out.push(`privileged: ${at}`);
    if (sc?.windowsOptions?.hostProcess === true) out.push(`hostProcess: ${at}`);
    for (const cap of sc?.capabilities?.add ?? []) if (!BASELINE_CAPABILITIES.has(cap)) out.push(`capabilities: ${at} adds ${cap}`);
    for (const port of c.ports ?? []) if ((port.hostPort ?? 0) !== 0) out.push(`host ports: ${at} hostPort ${port.hostPort ?? 0}`);
    if (sc?.seccompProfile?.type === 'Unconfined') out.push(`seccomp: ${at} Unconfined`);
    if (sc?.appArmorProfile?.type === 'Unconfined') out.push(`AppArmor: ${at} Unconfined`);
    if (!SELINUX_TYPES.has(sc?.seLinuxOptions?.type ?? '') || sc?.seLinuxOptions?.user !== undefined || sc?.seLinuxOptions?.role !== undefined) out.push(`SELinux: ${at}`);
    if (sc?.procMount !== undefined && sc.procMount !== 'Default') out.push(`/proc mount type: ${at} ${sc.procMount}`);
  }
  return out;
}

function checkRestrictedOnly(spec: IPodSpec): string[] {
  const out: string[] = [];
  const pod = spec.securityContext;
  for (const volume of spec.volumes ?? []) {
    const sources = Object.keys(volume).filter((k) => k !== 'name');
    for (const source of sources) if (!RESTRICTED_VOLUME_SOURCES.has(source)) out.push(`volume types: volume ${volume.name} is ${source}`);
  }
  if (pod?.runAsUser === 0) out.push('running as non-root user: spec.securityContext.runAsUser=0');
  const podSeccomp = pod?.seccompProfile?.type;
  for (const c of containersOf(spec)) {
    const sc = c.securityContext;
    const at = `container ${c.name}`;
    if (sc?.allowPrivilegeEscalation !== false) out.push(`privilege escalation: ${at} must set allowPrivilegeEscalation=false`);
    const nonRoot = sc?.runAsNonRoot ?? pod?.runAsNonRoot;
    if (nonRoot !== true) out.push(`running as non-root: ${at} (runAsNonRoot must be true on the pod or container)`);
    if (sc?.runAsUser === 0) out.push(`running as non-root user: ${at} runAsUser=0`);
    const seccomp = sc?.seccompProfile?.type ?? podSeccomp;
    if (seccomp !== 'RuntimeDefault' && seccomp !== 'Localhost') out.push(`seccomp: ${at} needs RuntimeDefault or Localhost`);
    if (!(sc?.capabilities?.drop ?? []).includes('ALL')) out.push(`capabilities: ${at} must drop ALL`);
    for (const cap of sc?.capabilities?.add ?? []) if (cap !== 'NET_BIND_SERVICE') out.push(`capabilities: ${at} may add only NET_BIND_SERVICE, adds ${cap}`);
  }
  return out;
}

/** Every check the pod fails at the given level (restricted includes baseline). Empty: it passes. */
export function checkPodSecurity(spec: IPodSpec, level: PodSecurityLevel): string[] {
  return level === 'baseline' ? checkBaseline(spec) : [...checkBaseline(spec), ...checkRestrictedOnly(spec)];
}
