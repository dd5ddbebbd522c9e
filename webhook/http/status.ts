import { boundMessage } from '../admission/printable.js';

/** metav1.Status, the body of a refused request (the API server logs it). */
export interface StatusBody {
  apiVersion: 'v1';
  kind: 'Status';
  status: 'Failure';
  code: number;
  reason: string;
  message: string;
}

export function statusBody(code: number, reason: string, message: string): StatusBody {
  return { apiVersion: 'v1', kind: 'Status', status: 'Failure', code, reason, message: boundMessage(message) };
}
