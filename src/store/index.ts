// The store's public surface: what the floors above it (the handlers) use. Its modules are one
// per table or concern (SQL access, PostgreSQL only); import them through here, as nats.js's
// core/src/mod.ts is its package's surface.

export { addressSuppression, deleteAddressSuppression, listAddressSuppressions, suppressAddress, type AddressSuppressionRow } from './address-suppressions.js';
export { findKey, insertKey, keysOf, keyUsage, replaceSecret, revokeKey, saveKey, type KeyRow } from './api-keys.js';
export { audiencePages, countAudience } from './audience.js';
export { rememberToken } from './callback-tokens.js';
export { campaignStats, deleteCampaign, findCampaign, insertCampaign, listCampaigns, liveCampaignsUsing, liveCampaignsTargeting, saveCampaign, type CampaignFields, type CampaignRow } from './campaigns.js';
export { channelStats, glanceStats } from './channel-stats.js';
export type { Db, Queryable } from './db.js';
export { withDeadline } from './deadline.js';
export { registerDevice } from './device-registrar.js';
export { deactivateDevice, devicesByTokens, devicesOf, type DeviceRow } from './devices.js';
export { eventNames, eventsOf, latestEvents, searchEvents, type EventFilter, type EventRow } from './events.js';
export type { PageBack } from './page-back.js';
export { identifyPerson } from './identify-group.js';
export { answerIdentify, claimIdentify } from './ingest-messages.js';
export { runMerge, scheduleMerge } from './merges.js';
export { deletePerson, findPerson, findPersonById, listPeople, peopleByIds, peopleStats, setConsent, unsubscribeByLink, unsubscribeSubject, updateTraits, upsertPerson, type PersonRow } from './people.js';
export { personIds } from './person-cache.js';
export type { StoreLink } from './open.js';
export { loadPushChannels, savePushChannels, type ApnsCredentials, type FcmCredentials, type PushChannelChanges, type PushChannels } from './push-channels.js';
export { campaignMessages, loadMessage, messagesOf, pushMessageExists, saveMessages, type StoredMessage } from './messages.js';
export { liftSuppression, listSuppressions, suppressedAmong, suppressToken } from './suppressions.js';
export { deleteTemplate, findTemplate, insertTemplate, saveTemplate, templateContents, templatesOf, type TemplateFields, type TemplateRow } from './templates.js';
export { createWorkspace, DEFAULT_SETTINGS, loadWorkspace, memberRole, membersOf, putMember, removeMember, saveWorkspace, workspacesOf, type MemberRow, type WorkspaceRow } from './workspaces.js';
export { attemptsOf, deleteEndpoint, endpointsOf, enqueueDelivery, findEndpoint, insertEndpoint, resendDelivery, rotateSecret, saveEndpoint, type AttemptRow, type EndpointRow } from './webhooks.js';
