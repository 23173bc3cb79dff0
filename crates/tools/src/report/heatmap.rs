//! The traffic heat maps: messages (left) and bytes (right) from each sender (row) to each receiver
//! (column), darker for more on a logarithmic scale, so a centralised master's row and column stand
//! out against DRQS's spread, and a flood of empty work requests shows even though it carries no
//! bytes. Each rank's record names its busiest peers ([`canopy_distwalk::stats::TOP_PEERS`]); above
//! [`super::MAX_CELLS`] ranks a cell sums a block of consecutive ranks.

use super::{Block, block_of};
use canopy_distwalk::ClusterStats;
use plotters::coord::Shift;
use plotters::prelude::*;
use std::collections::BTreeMap;
use std::path::Path;

/// (messages, bytes) per (sender block, receiver block).
type Cells = BTreeMap<(usize, usize), (u64, u64)>;

pub fn draw(stats: &ClusterStats, path: &Path) -> Result<(), String> {
    let block = block_of(stats.ranks.len());
    let mut cells = Cells::new();
    for rank in &stats.ranks {
        for peer in &rank.top_peers {
            let cell = cells.entry((block.of(rank.rank), block.of(peer.rank))).or_default();
            cell.0 += peer.messages;
            cell.1 += peer.bytes;
        }
    }
    let shown: u64 = cells.values().map(|c| c.0).sum();
    let root = SVGBackend::new(path, (1400, 700)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let (title_area, body) = root.split_vertically(40);
    let share = 100.0 * shown as f64 / stats.total_messages().max(1) as f64;
    let title = format!(
        "{} — {} ranks{}; each rank's busiest peers: {share:.0} % of {} messages, {} B in all",
        stats.scheduler,
        stats.ranks.len(),
        block.describe(),
        stats.total_messages(),
        stats.total_bytes()
    );
    title_area.draw(&Text::new(title, (12, 12), ("sans-serif", 17))).map_err(|e| e.to_string())?;
    let (left, right) = body.split_horizontally(700);
    panel(&left, "messages sent", "", &cells, block, |c| c.0)?;
    panel(&right, "bytes sent", " B", &cells, block, |c| c.1)?;
    root.present().map_err(|e| e.to_string())
}

fn panel(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    what: &str,
    unit: &str,
    cells: &Cells,
    block: Block,
    value: impl Fn(&(u64, u64)) -> u64,
) -> Result<(), String> {
    let max = cells.values().map(&value).max().unwrap_or(0).max(1);
    let shade = |v: u64| -> RGBColor {
        if v == 0 {
            return WHITE;
        }
        // log scale from 1 (pale) to the maximum (dark blue).
        let t = ((v as f64).ln() / (max as f64).ln().max(1e-9)).clamp(0.0, 1.0);
        let mix = |from: f64, to: f64| (from + (to - from) * t) as u8;
        RGBColor(mix(222.0, 8.0), mix(235.0, 48.0), mix(247.0, 107.0))
    };
    let (chart_area, legend_area) = area.split_horizontally(580);
    let last = block.count.saturating_sub(1);
    let mut chart = ChartBuilder::on(&chart_area)
        .caption(what, ("sans-serif", 16))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(50)
        .build_cartesian_2d((0..last).into_segmented(), (0..last).into_segmented())
        .map_err(|e| e.to_string())?;
    let axis = |side: &str| if block.size == 1 { format!("{side} rank") } else { format!("{side} block") };
    chart
        .configure_mesh()
        .disable_mesh()
        .x_desc(axis("receiver"))
        .y_desc(axis("sender"))
        .x_labels(last.min(15) + 1)
        .y_labels(last.min(15) + 1)
        .draw()
        .map_err(|e| e.to_string())?;
    let rectangles = cells.iter().map(|(&(from, to), cell)| {
        let corner = |x, y| (SegmentValue::Exact(x), SegmentValue::Exact(y));
        Rectangle::new([corner(to, from), corner(to + 1, from + 1)], shade(value(cell)).filled())
    });
    chart.draw_series(rectangles).map_err(|e| e.to_string())?;
    draw_legend(&legend_area, max, unit, &shade)
}

fn draw_legend(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    max: u64,
    unit: &str,
    shade: &dyn Fn(u64) -> RGBColor,
) -> Result<(), String> {
    let steps = 20u32;
    for i in 0..steps {
        let v = (max as f64).powf(f64::from(i + 1) / f64::from(steps)) as u64;
        let top = 560 - (i as i32 + 1) * 24;
        area.draw(&Rectangle::new([(10, top), (40, top + 24)], shade(v).filled()))
            .map_err(|e| e.to_string())?;
    }
    let label = |y: i32, text: String| area.draw(&Text::new(text, (46, y), ("sans-serif", 13)));
    label(76, format!("{max}{unit}")).map_err(|e| e.to_string())?;
    label(548, format!("1{unit}")).map_err(|e| e.to_string())?;
    label(590, "white: none".to_string()).map_err(|e| e.to_string())?;
    Ok(())
}
