-- Functions the compiled `rawfilter` / `rawsort` SQL relies on (see
-- `hub_query::content::rawfilter_sql`); the PostgreSQL twins of the functions the
-- SQLite backend registers (`rawfilter_functions.rs`).

-- Unicode case folding as `hub_model::fold` does it: full lower-case mapping (ICU root
-- locale, final sigma included), then ß → ss.
CREATE FUNCTION hub_fold(t text) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS $$ SELECT replace(lower(t COLLATE "und-x-icu"), 'ß', 'ss') COLLATE "C" $$;

-- A type mismatch between a field and the literal compared with it: a client error
-- (SQLSTATE HR001) carrying the parameter (DETAIL) and the literal's position (HINT),
-- with the same message as SQLite's `hub_rf_check`. Only called on a mismatch.
CREATE FUNCTION hub_rf_mismatch(field_type text, wanted text, pos integer, parameter text) RETURNS boolean
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
    AS $$
BEGIN
    IF field_type IS NULL OR field_type = 'null' THEN
        RETURN NULL;
    END IF;
    RAISE EXCEPTION USING
        ERRCODE = 'HR001',
        MESSAGE = format('the field holds %s but the value compared with it is %s; write the value as the field''s type',
                         CASE field_type
                             WHEN 'boolean' THEN 'booleans'
                             WHEN 'number' THEN 'numbers'
                             WHEN 'string' THEN 'text'
                             WHEN 'array' THEN 'an array'
                             ELSE 'an object' END,
                         wanted),
        DETAIL = parameter,
        HINT = pos::text;
END
$$;

-- The values `json_each` visits on SQLite: an array's elements, an object's member
-- values, or a scalar (JSON null included) itself; nothing for SQL NULL (a missing path).
CREATE FUNCTION hub_rf_each(j jsonb) RETURNS SETOF jsonb
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
SELECT e FROM jsonb_array_elements(
    CASE WHEN j IS NULL THEN NULL
         WHEN jsonb_typeof(j) = 'array' THEN j
         WHEN jsonb_typeof(j) = 'object' THEN (SELECT COALESCE(jsonb_agg(value), '[]') FROM jsonb_each(j))
         ELSE jsonb_build_array(j) END) AS e
$$;

-- SQLite's `datetime(text)` for the forms documents hold: `YYYY-MM-DD`, optionally
-- followed (after spaces or `T`s) by `HH:MM[:SS[.fff]]`, an optional `Z` or `±HH:MM`
-- offset (converted to UTC); a time alone (on 2000-01-01); `now`; a number (a Julian
-- day). Out-of-range fields (month 13, minute 60, …) give NULL, overflowing days roll
-- over (`02-31` is `03-02` or `03-03`), fractions of seconds are dropped. Differences
-- from SQLite 3.46, all on values no document should hold: hour 24, year 0, negative
-- years and results before year 1 give NULL here (SQLite prints them as written, e.g.
-- `24:30:00`, or with a `-` sign).
CREATE FUNCTION hub_rf_datetime(t text) RETURNS text
    LANGUAGE plpgsql STABLE PARALLEL SAFE
    AS $$
DECLARE
    m text[];
    ts timestamp;
    secs double precision;
    tz integer := 0;
BEGIN
    IF t IS NULL THEN
        RETURN NULL;
    END IF;
    IF lower(t) = 'now' THEN
        RETURN to_char(statement_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS');
    END IF;
    -- A number is a Julian day number, rounded to the millisecond.
    IF t ~ '^[ \t\n\f\r\v]*[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?[ \t\n\f\r\v]*$' THEN
        ts := timestamp '1970-01-01 00:00:00'
              + make_interval(secs => (floor(btrim(t, E' \t\n\f\r\v')::float8 * 86400000 + 0.5) - 210866760000000) / 1000.0);
        IF ts < timestamp '0001-01-01' OR ts >= timestamp '10000-01-01' THEN
            RETURN NULL;
        END IF;
        RETURN to_char(ts, 'YYYY-MM-DD HH24:MI:SS');
    END IF;
    m := regexp_match(t,
        '^(?:([0-9]{4})-([0-9]{2})-([0-9]{2})(?:[ \t\n\f\r\v]|T)*)?(?:([0-9]{2}):([0-9]{2})(?::([0-9]{2})(?:\.([0-9]+))?)?[ \t\n\f\r\v]*(?:([Zz])|([+-])([0-9]{2}):([0-9]{2}))?[ \t\n\f\r\v]*)?$');
    IF m IS NULL OR (m[1] IS NULL AND m[4] IS NULL) THEN
        RETURN NULL;
    END IF;
    IF m[1] IS NOT NULL THEN
        IF m[1]::int < 1 OR m[2]::int NOT BETWEEN 1 AND 12 OR m[3]::int NOT BETWEEN 1 AND 31 THEN
            RETURN NULL;
        END IF;
        ts := make_timestamp(m[1]::int, m[2]::int, 1, 0, 0, 0) + make_interval(days => m[3]::int - 1);
    ELSE
        ts := timestamp '2000-01-01 00:00:00';
    END IF;
    IF m[4] IS NOT NULL THEN
        IF m[4]::int > 23 OR m[5]::int > 59 OR COALESCE(m[6], '0')::int > 59 THEN
            RETURN NULL;
        END IF;
        IF m[9] IS NOT NULL THEN
            IF m[10]::int > 14 OR m[11]::int > 59 THEN
                RETURN NULL;
            END IF;
            tz := (m[10]::int * 60 + m[11]::int) * CASE WHEN m[9] = '-' THEN -1 ELSE 1 END;
        END IF;
        secs := COALESCE(m[6], '0')::int;
        ts := ts + make_interval(hours => m[4]::int, mins => m[5]::int - tz, secs => secs);
    END IF;
    IF ts < timestamp '0001-01-01' OR ts >= timestamp '10000-01-01' THEN
        RETURN NULL;
    END IF;
    RETURN to_char(ts, 'YYYY-MM-DD HH24:MI:SS');
EXCEPTION WHEN datetime_field_overflow OR invalid_datetime_format OR numeric_value_out_of_range THEN
    RETURN NULL;
END
$$;
