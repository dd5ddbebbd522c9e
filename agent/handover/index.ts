/**
 * The handover capability (docs/handover.md): the link between two agent instances on one node
 * (a newer one follows the older ones, takes their sessions and their IPVS holds over), the
 * sessions an older instance still holds, which instance edits IPVS while they overlap, and the
 * kernel's migration of pending connections between their listeners.
 */
export { enableAcceptMigration } from './accept-migration.js';
export { ForeignSessions } from './foreign-sessions.js';
export { Handover, type HandedSessions, type IpvsEditor } from './handover.js';
export { IpvsOwnership } from './ipvs-ownership.js';
