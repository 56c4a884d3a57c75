package perp

// communityPoolSQL adds the proposals that passed in (?1, ?2] and spent from
// the community pool to perp_community_pool_spends: the MsgCommunityPoolSpend
// messages (x/distribution, or x/protocolpool where it holds the pool) of
// the proposal's MsgSubmitProposal, summed per denom with their distinct
// recipients. A proposal passes only when its messages executed (otherwise
// its result is proposal_failed). ?0 chain.
const communityPoolSQL = `WITH passed AS (
		SELECT DISTINCT proposal_id, height FROM gov_events
		WHERE chain_id = ?0 AND kind = 'result' AND detail = 'proposal_passed' AND height > ?1 AND height <= ?2),
	submitted AS (
		SELECT DISTINCT ON (s.proposal_id) s.proposal_id, s.height, s.tx_index, s.msg_index
		FROM gov_events s JOIN passed p ON p.proposal_id = s.proposal_id
		WHERE s.chain_id = ?0 AND s.kind = 'submit' ORDER BY s.proposal_id, s.height),
	spends AS (
		SELECT s.proposal_id, e->>'recipient' AS recipient, c->>'denom' AS denom, (c->>'amount')::numeric AS amount
		FROM submitted s
		JOIN messages m ON m.chain_id = ?0 AND m.height = s.height AND m.tx_index = s.tx_index
			AND (m.msg_index = s.msg_index OR s.msg_index < 0) AND m.type_url = '/cosmos.gov.v1.MsgSubmitProposal'
		CROSS JOIN LATERAL jsonb_array_elements(m.body->'messages') e
		CROSS JOIN LATERAL jsonb_array_elements(e->'amount') c
		WHERE e->>'@type' IN ('/cosmos.distribution.v1beta1.MsgCommunityPoolSpend', '/cosmos.protocolpool.v1.MsgCommunityPoolSpend'))
	INSERT INTO perp_community_pool_spends (chain_id, proposal_id, height, time, denom, amount, receivers)
	SELECT ?0, s.proposal_id, p.height, b.time, s.denom, sum(s.amount), count(DISTINCT s.recipient)
	FROM spends s JOIN passed p ON p.proposal_id = s.proposal_id JOIN blocks b ON b.chain_id = ?0 AND b.height = p.height
	GROUP BY s.proposal_id, p.height, b.time, s.denom
	ON CONFLICT (chain_id, proposal_id, denom) DO NOTHING`
