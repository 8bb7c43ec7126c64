-- A failed `rawfilter` type check reports only what the store needs to name the
-- client's mistake: the check id the compiled query bound (DETAIL) and the JSON type
-- found (HINT, a `jsonb_typeof` name). The query parameter, the position and the
-- message stay in Hub (`hub_query::content::checks`); no client text passes here.
-- Supersedes `hub_rf_mismatch` (migration 4), which carried the parameter name and
-- the message; that one stays defined so a server of the previous release sharing this
-- database keeps answering while processes are replaced one by one.
CREATE FUNCTION hub_rf_fail(check_id integer, field_type text) RETURNS boolean
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
    AS $$
BEGIN
    IF field_type IS NULL OR field_type = 'null' THEN
        RETURN NULL;
    END IF;
    RAISE EXCEPTION USING
        ERRCODE = 'HR001',
        MESSAGE = format('rawfilter check %s failed', check_id),
        DETAIL = check_id::text,
        HINT = field_type;
END
$$;
