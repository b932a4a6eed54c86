// who.js: the logged-in identity and what its role may do
// (docs/api.md: reader < agent = editor < admin; only admins write rules).

export const who = { space: '', role: '', tokenId: '' };

const RANK = { reader: 0, agent: 1, editor: 1, admin: 2 };

export function setWho(me) {
    who.space = me ? me.space : '';
    who.role = me ? me.role : '';
    who.tokenId = me ? me.token_id : '';
}

/** May this role create, change, rename, delete or restore documents of category? */
export function canWrite(category) {
    const r = RANK[who.role] ?? -1;
    return category === 'rules' ? r >= 2 : r >= 1;
}

/** Why it may not: an i18n key, or null when it may. */
export function whyReadOnly(category) {
    if (canWrite(category)) return null;
    if ((RANK[who.role] ?? 0) < 1) return 'panel.readOnlyReader';
    return 'panel.rulesAdminOnly';
}
