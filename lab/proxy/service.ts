/** A Service as the lab's proxies see it: a virtual address, ports, and the ready endpoints. */
export interface ServicePort {
  name: string;
  protocol: 'tcp' | 'udp';
  port: number;
  targetPort: number;
}

export interface Endpoint {
  /** The pod's name (`pod-1-2`). */
  pod: string;
  ip: string;
}

export interface ServiceState {
  name: string;
  address: string;
  ports: ServicePort[];
  endpoints: Endpoint[];
}
