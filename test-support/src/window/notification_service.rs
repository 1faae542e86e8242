//! A desktop notification service for tests: it owns `org.freedesktop.Notifications` on
//! a private D-Bus session (the test keyring's), keeps every notification the app sends,
//! and can click one the way a person does — by emitting `ActionInvoked`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use zbus::zvariant::OwnedValue;

const PATH: &str = "/org/freedesktop/Notifications";
const INTERFACE: &str = "org.freedesktop.Notifications";

/// One notification as the app sent it.
#[derive(Debug, Clone)]
pub struct SentNotification {
    pub id: u32,
    pub app_name: String,
    pub summary: String,
    pub body: String,
    /// Action keys and labels, in pairs as the specification lays them out.
    pub actions: Vec<String>,
}

#[derive(Default)]
struct Received {
    next_id: u32,
    sent: Vec<SentNotification>,
}

struct Notifications {
    received: Arc<Mutex<Received>>,
}

#[zbus::interface(name = "org.freedesktop.Notifications")]
impl Notifications {
    #[allow(clippy::too_many_arguments)]
    fn notify(
        &self,
        app_name: String,
        _replaces_id: u32,
        _app_icon: String,
        summary: String,
        body: String,
        actions: Vec<String>,
        _hints: HashMap<String, OwnedValue>,
        _expire_timeout: i32,
    ) -> u32 {
        let mut received = self.received.lock().expect("notifications");
        received.next_id += 1;
        let id = received.next_id;
        received.sent.push(SentNotification {
            id,
            app_name,
            summary,
            body,
            actions,
        });
        id
    }

    fn get_capabilities(&self) -> Vec<String> {
        vec!["actions".to_owned(), "body".to_owned()]
    }

    fn get_server_information(&self) -> (String, String, String, String) {
        (
            "handoff-test-notifications".to_owned(),
            "handoff".to_owned(),
            "1".to_owned(),
            "1.2".to_owned(),
        )
    }

    fn close_notification(&self, _id: u32) {}
}

pub struct NotificationService {
    connection: zbus::Connection,
    received: Arc<Mutex<Received>>,
}

impl NotificationService {
    /// Serves notifications on the bus at `address`.
    pub async fn start(address: &str) -> NotificationService {
        let received = Arc::new(Mutex::new(Received::default()));
        let connection = zbus::connection::Builder::address(address)
            .expect("a D-Bus address")
            .name(INTERFACE)
            .expect("the service's well-known name")
            .serve_at(
                PATH,
                Notifications {
                    received: received.clone(),
                },
            )
            .expect("the service is served at its path")
            .build()
            .await
            .expect("the notification service joins the bus");
        NotificationService {
            connection,
            received,
        }
    }

    pub fn sent(&self) -> Vec<SentNotification> {
        self.received.lock().expect("notifications").sent.clone()
    }

    /// Waits up to `limit` for a notification whose summary and body `accept` likes.
    pub async fn wait_for(
        &self,
        limit: Duration,
        accept: impl Fn(&SentNotification) -> bool,
    ) -> SentNotification {
        crate::eventually::eventually_within(limit, "such a notification is sent", || async {
            self.sent().into_iter().find(|sent| accept(sent))
        })
        .await
    }

    /// Clicks notification `id` (its default action), as the desktop reports a click.
    pub async fn click(&self, id: u32) {
        self.connection
            .emit_signal(
                None::<&str>,
                PATH,
                INTERFACE,
                "ActionInvoked",
                &(id, "default"),
            )
            .await
            .expect("ActionInvoked is emitted");
    }
}
