//! How statements reach the server, decided in one place for every query of the backend.
//!
//! Two modes ([`StatementMode`]):
//! - `Prepared` (a direct connection or a session-mode pooler): named statements, cached
//!   per pooled connection, so repeated requests skip PostgreSQL's parse and plan.
//! - `Unnamed` (behind a transaction-mode pooler such as PgBouncer < 1.21): the pooler
//!   hands each transaction, and each statement outside one, to whichever server
//!   connection is free, so a named statement prepared in one round trip may be missing
//!   in the next. Every statement is then sent as Parse + Bind + Execute + Sync of the
//!   unnamed statement in one round trip (`query_typed`). Parameter types, which the
//!   binary protocol needs up front, are learned once per SQL text by describing the
//!   statement inside a transaction (one server connection, closed before the commit)
//!   and kept per backend. No session state (SET, temporary tables, session locks) is
//!   used in either mode.
//!
//! Owns: [`Conn`], [`Tx`] and the [`Queries`] methods the query sites call. Must not:
//! build SQL or interpret rows.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};

use deadpool_postgres::StatementCache;
use tokio_postgres::types::{ToSql, Type};
use tokio_postgres::{Client, Error, Row, RowStream, Statement};

/// Statements kept (named per connection, or parameter types per backend) before the
/// cache is emptied: clients can vary the shapes of compiled queries at will.
pub(crate) const STATEMENT_CACHE_LIMIT: usize = 500;

/// How statements are sent (see the module documentation).
#[derive(Clone)]
pub(crate) enum StatementMode {
    Prepared,
    Unnamed(Arc<TypeCache>),
}

/// Parameter types per SQL text, learned once for unnamed statements.
#[derive(Default)]
pub(crate) struct TypeCache(Mutex<HashMap<String, Arc<[Type]>>>);

impl TypeCache {
    fn get(&self, sql: &str) -> Option<Arc<[Type]>> {
        self.0.lock().ok()?.get(sql).cloned()
    }

    fn put(&self, sql: &str, types: Arc<[Type]>) {
        if let Ok(mut map) = self.0.lock() {
            if map.len() >= STATEMENT_CACHE_LIMIT {
                map.clear();
            }
            map.insert(sql.to_string(), types);
        }
    }
}

/// A statement ready to run: named (prepared and cached) or the text of an unnamed one
/// with its parameter types.
pub(crate) enum Stmt {
    Named(Statement),
    Unnamed { sql: Arc<str>, types: Arc<[Type]> },
}

/// What the query methods take: SQL text or a [`Stmt`].
pub(crate) trait AsSql: Sync {
    fn as_sql(&self) -> SqlRef<'_>;
}

pub(crate) enum SqlRef<'s> {
    Text(&'s str),
    Stmt(&'s Stmt),
}

impl AsSql for str {
    fn as_sql(&self) -> SqlRef<'_> {
        SqlRef::Text(self)
    }
}

impl AsSql for String {
    fn as_sql(&self) -> SqlRef<'_> {
        SqlRef::Text(self)
    }
}

impl AsSql for Stmt {
    fn as_sql(&self) -> SqlRef<'_> {
        SqlRef::Stmt(self)
    }
}

/// One connection's view for running statements: the client, its statement cache, the
/// mode, and whether a transaction is open (which pins the server connection).
#[derive(Clone, Copy)]
pub(crate) struct Session<'a> {
    client: &'a Client,
    cache: &'a StatementCache,
    mode: &'a StatementMode,
    in_transaction: bool,
}

/// How one call runs.
enum Plan<'s> {
    Named(&'s Statement),
    Text(&'s str),
    Unnamed(&'s str, Arc<[Type]>),
}

type Params<'p> = [&'p (dyn ToSql + Sync)];

fn typed<'p>(params: &Params<'p>, types: &[Type]) -> Vec<(&'p (dyn ToSql + Sync), Type)> {
    params.iter().copied().zip(types.iter().cloned()).collect()
}

impl Session<'_> {
    async fn prepare(&self, sql: &str) -> Result<Stmt, Error> {
        match self.mode {
            StatementMode::Prepared => Ok(Stmt::Named(self.cache.prepare(self.client, sql).await?)),
            StatementMode::Unnamed(types) => Ok(Stmt::Unnamed {
                sql: Arc::from(sql),
                types: self.param_types(types, sql).await?,
            }),
        }
    }

    /// The server's parameter types of `sql`, described once (see the module docs).
    async fn param_types(&self, cache: &TypeCache, sql: &str) -> Result<Arc<[Type]>, Error> {
        if let Some(types) = cache.get(sql) {
            return Ok(types);
        }
        // The describe uses a named statement: it and its Close must reach the same
        // server connection, which a transaction guarantees through the pooler.
        if !self.in_transaction {
            self.client.batch_execute("BEGIN").await?;
        }
        let described = self
            .client
            .prepare(sql)
            .await
            .map(|statement| Arc::<[Type]>::from(statement.params()));
        if !self.in_transaction {
            let end = if described.is_ok() {
                "COMMIT"
            } else {
                "ROLLBACK"
            };
            self.client.batch_execute(end).await?;
        }
        let types = described?;
        cache.put(sql, types.clone());
        Ok(types)
    }

    async fn plan<'s>(&self, sql: SqlRef<'s>) -> Result<Plan<'s>, Error> {
        Ok(match (sql, self.mode) {
            (SqlRef::Stmt(Stmt::Named(s)), _) => Plan::Named(s),
            (SqlRef::Stmt(Stmt::Unnamed { sql, types }), _) => Plan::Unnamed(sql, types.clone()),
            (SqlRef::Text(text), StatementMode::Prepared) => Plan::Text(text),
            (SqlRef::Text(text), StatementMode::Unnamed(cache)) => {
                Plan::Unnamed(text, self.param_types(cache, text).await?)
            }
        })
    }

    async fn query(&self, sql: SqlRef<'_>, params: &Params<'_>) -> Result<Vec<Row>, Error> {
        match self.plan(sql).await? {
            Plan::Named(s) => self.client.query(s, params).await,
            Plan::Text(t) => self.client.query(t, params).await,
            Plan::Unnamed(t, types) => self.client.query_typed(t, &typed(params, &types)).await,
        }
    }

    async fn query_one(&self, sql: SqlRef<'_>, params: &Params<'_>) -> Result<Row, Error> {
        match self.plan(sql).await? {
            Plan::Named(s) => self.client.query_one(s, params).await,
            Plan::Text(t) => self.client.query_one(t, params).await,
            Plan::Unnamed(t, types) => self.client.query_typed_one(t, &typed(params, &types)).await,
        }
    }

    async fn query_opt(&self, sql: SqlRef<'_>, params: &Params<'_>) -> Result<Option<Row>, Error> {
        match self.plan(sql).await? {
            Plan::Named(s) => self.client.query_opt(s, params).await,
            Plan::Text(t) => self.client.query_opt(t, params).await,
            Plan::Unnamed(t, types) => self.client.query_typed_opt(t, &typed(params, &types)).await,
        }
    }

    async fn execute(&self, sql: SqlRef<'_>, params: &Params<'_>) -> Result<u64, Error> {
        match self.plan(sql).await? {
            Plan::Named(s) => self.client.execute(s, params).await,
            Plan::Text(t) => self.client.execute(t, params).await,
            Plan::Unnamed(t, types) => self.client.execute_typed(t, &typed(params, &types)).await,
        }
    }

    async fn query_raw(
        &self,
        sql: SqlRef<'_>,
        params: Vec<&(dyn ToSql + Sync)>,
    ) -> Result<RowStream, Error> {
        match self.plan(sql).await? {
            Plan::Named(s) => self.client.query_raw(s, params).await,
            Plan::Text(t) => self.client.query_raw(t, params).await,
            Plan::Unnamed(t, types) => self.client.query_typed_raw(t, typed(&params, &types)).await,
        }
    }
}

/// The statement methods of a connection and of a transaction, the same for both.
pub(crate) trait Queries: Sync {
    fn session(&self) -> Session<'_>;

    /// A statement for `sql`: prepared and cached per connection, or described once
    /// per backend for unnamed use (see the module documentation).
    fn prepare_cached(&self, sql: &str) -> impl Future<Output = Result<Stmt, Error>> + Send {
        let session = self.session();
        async move { session.prepare(sql).await }
    }

    fn query<T: AsSql + ?Sized>(
        &self,
        sql: &T,
        params: &Params<'_>,
    ) -> impl Future<Output = Result<Vec<Row>, Error>> + Send {
        let session = self.session();
        async move { session.query(sql.as_sql(), params).await }
    }

    fn query_one<T: AsSql + ?Sized>(
        &self,
        sql: &T,
        params: &Params<'_>,
    ) -> impl Future<Output = Result<Row, Error>> + Send {
        let session = self.session();
        async move { session.query_one(sql.as_sql(), params).await }
    }

    fn query_opt<T: AsSql + ?Sized>(
        &self,
        sql: &T,
        params: &Params<'_>,
    ) -> impl Future<Output = Result<Option<Row>, Error>> + Send {
        let session = self.session();
        async move { session.query_opt(sql.as_sql(), params).await }
    }

    fn execute<T: AsSql + ?Sized>(
        &self,
        sql: &T,
        params: &Params<'_>,
    ) -> impl Future<Output = Result<u64, Error>> + Send {
        let session = self.session();
        async move { session.execute(sql.as_sql(), params).await }
    }

    fn query_raw<T: AsSql + ?Sized>(
        &self,
        sql: &T,
        params: Vec<&(dyn ToSql + Sync)>,
    ) -> impl Future<Output = Result<RowStream, Error>> + Send {
        let session = self.session();
        async move { session.query_raw(sql.as_sql(), params).await }
    }

    /// Statements without parameters, in the simple protocol (one round trip, no
    /// named statement).
    fn batch_execute(&self, sql: &str) -> impl Future<Output = Result<(), Error>> + Send {
        let client = self.session().client;
        async move { client.batch_execute(sql).await }
    }
}

/// A pooled connection.
pub(crate) struct Conn {
    object: deadpool_postgres::Object,
    mode: StatementMode,
}

impl Conn {
    pub(crate) fn new(object: deadpool_postgres::Object, mode: StatementMode) -> Self {
        Conn { object, mode }
    }

    pub(crate) async fn transaction(&mut self) -> Result<Tx<'_>, Error> {
        Ok(Tx {
            tx: self.object.transaction().await?,
            mode: &self.mode,
        })
    }

    /// Whether the connection has closed (the server went away or ended it).
    pub(crate) fn is_closed(&self) -> bool {
        self.object.is_closed()
    }

    /// A read-only repeatable-read transaction: one snapshot for several reads.
    pub(crate) async fn snapshot(&mut self) -> Result<Tx<'_>, Error> {
        Ok(Tx {
            tx: self
                .object
                .build_transaction()
                .isolation_level(tokio_postgres::IsolationLevel::RepeatableRead)
                .read_only(true)
                .start()
                .await?,
            mode: &self.mode,
        })
    }

    /// Whether statements are prepared and named on this connection (not behind a
    /// transaction-mode pooler): what portals need.
    pub(crate) fn prepares_statements(&self) -> bool {
        matches!(self.mode, StatementMode::Prepared)
    }

    /// Named statements cached on this connection (empty in the unnamed mode).
    pub(crate) fn cached_statements(&self) -> &StatementCache {
        &self.object.statement_cache
    }
}

impl Queries for Conn {
    fn session(&self) -> Session<'_> {
        Session {
            client: &self.object,
            cache: &self.object.statement_cache,
            mode: &self.mode,
            in_transaction: false,
        }
    }
}

/// An open transaction on a [`Conn`]; rolled back when dropped without [`Tx::commit`].
pub(crate) struct Tx<'a> {
    tx: deadpool_postgres::Transaction<'a>,
    mode: &'a StatementMode,
}

impl Tx<'_> {
    pub(crate) async fn commit(self) -> Result<(), Error> {
        self.tx.commit().await
    }

    /// A portal of a named statement with `params`: its rows are fetched in parts by
    /// [`Tx::fetch_stream`], several portals side by side in this transaction.
    pub(crate) async fn portal(
        &self,
        statement: &Statement,
        params: &Params<'_>,
    ) -> Result<tokio_postgres::Portal, Error> {
        self.tx.bind(statement, params).await
    }

    /// The next `max_rows` rows of `portal` as they arrive (fewer at its end): the
    /// caller decodes rows while the server still produces the following ones. Each
    /// stream must be read to its end before the next statement's rows can arrive.
    pub(crate) async fn fetch_stream(
        &self,
        portal: &tokio_postgres::Portal,
        max_rows: i32,
    ) -> Result<tokio_postgres::RowStream, Error> {
        self.tx.query_portal_raw(portal, max_rows).await
    }

    /// `COPY … FROM STDIN` in this transaction: a statement prepared once per connection
    /// (no round trip to describe it again), or behind a transaction-mode pooler one
    /// that lives and closes inside the transaction.
    pub(crate) async fn copy_in<U>(&self, sql: &str) -> Result<tokio_postgres::CopyInSink<U>, Error>
    where
        U: bytes::Buf + Send + 'static,
    {
        match self.mode {
            StatementMode::Prepared => {
                let statement = self
                    .tx
                    .statement_cache
                    .prepare(self.tx.client(), sql)
                    .await?;
                self.tx.copy_in(&statement).await
            }
            StatementMode::Unnamed(_) => self.tx.copy_in(sql).await,
        }
    }
}

impl Queries for Tx<'_> {
    fn session(&self) -> Session<'_> {
        Session {
            client: self.tx.client(),
            cache: &self.tx.statement_cache,
            mode: self.mode,
            in_transaction: true,
        }
    }
}
