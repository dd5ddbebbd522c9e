/** The parts of an admission.k8s.io/v1 AdmissionRequest that conndrain reads (decoded and checked by webhook/http/hygiene.ts). */
export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

export interface AdmissionRequest {
  uid: string;
  kind?: GroupVersionKind;
  resource?: { group: string; version: string; resource: string };
  subResource?: string;
  name?: string;
  namespace?: string;
  operation?: string;
  object?: unknown;
  oldObject?: unknown;
  dryRun?: boolean;
}

/** metav1.Status, as the API server shows it to the user on a deny. */
export interface AdmissionStatus {
  code: number;
  message: string;
  reason?: string;
}
