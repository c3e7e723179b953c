//! The app's window as a whole: the theme chosen in its View menu (in force at once, kept with
//! the settings, the system's followed), and its close, after which a signal ends the process at
//! once instead of asking a closed window to close.

use std::collections::HashMap;

use crate::harness::harness;
use egui::{Theme, ThemePreference};
use egui_kittest::kittest::Queryable as _;
use graylab::app::Settings;
use graylab::system::signals;

/// eframe's storage, in memory: what `app.ron` would hold.
#[derive(Default)]
struct Storage(HashMap<String, String>);

impl eframe::Storage for Storage {
    fn get_string(&self, key: &str) -> Option<String> {
        self.0.get(key).cloned()
    }

    fn set_string(&mut self, key: &str, value: String) {
        self.0.insert(key.to_owned(), value);
    }

    fn remove_string(&mut self, key: &str) {
        self.0.remove(key);
    }

    fn flush(&mut self) {}
}

/// Picks `choice` ("System", "Light" or "Dark") in the View menu.
fn pick_theme(h: &mut egui_kittest::Harness<'static, graylab::app::GraylabApp>, choice: &str) {
    h.get_by_label("View").click();
    h.run_steps(2);
    h.get_by_label(choice).click();
    h.run_steps(2);
}

#[test]
fn the_view_menu_switches_the_theme_and_the_settings_keep_it() {
    let Some(mut h) = harness(None) else { return };
    h.run_steps(2);
    // Fresh settings follow the system; one that does not say is taken as dark (egui's fallback).
    assert_eq!(h.state_mut().settings_mut().theme, ThemePreference::System);
    assert_eq!(h.ctx.theme(), Theme::Dark);

    pick_theme(&mut h, "Light");
    assert_eq!(h.ctx.options(|o| o.theme_preference), ThemePreference::Light);
    assert_eq!(h.ctx.theme(), Theme::Light);
    assert!(!h.ctx.global_style().visuals.dark_mode, "drawn light");
    // Saved as eframe saves at exit, and read back as the next launch reads it.
    let mut storage = Storage::default();
    eframe::App::save(h.state_mut(), &mut storage);
    let kept: Settings = eframe::get_value(&storage, eframe::APP_KEY).expect("the settings saved");
    assert_eq!(kept.theme, ThemePreference::Light);

    pick_theme(&mut h, "Dark");
    assert_eq!((h.state_mut().settings_mut().theme, h.ctx.theme()), (ThemePreference::Dark, Theme::Dark));

    // Back on System, a desktop that says light is followed.
    h.input_mut().system_theme = Some(Theme::Light);
    pick_theme(&mut h, "System");
    assert_eq!(h.state_mut().settings_mut().theme, ThemePreference::System);
    assert_eq!(h.ctx.theme(), Theme::Light);
}

/// While the window is open a first signal only closes it (`app::run`); once it has closed, while
/// eframe writes the settings and the worker winds down, nothing would answer another close: the
/// first signal must end the process at once, as it ends a command.
#[test]
fn once_the_window_closes_a_signal_no_longer_stops_gently() {
    let Some(mut h) = harness(None) else { return };
    h.state_mut().stop_gently_while_open(signals::stop_gently("closing the window"));
    h.run_steps(2);
    assert!(signals::stops_gently(), "while the window is open");
    // Its close button, as eframe hands it to egui.
    h.input_mut()
        .viewports
        .entry(egui::ViewportId::ROOT)
        .or_default()
        .events
        .push(egui::ViewportEvent::Close);
    h.step();
    assert!(!signals::stops_gently(), "once it closes");
}
