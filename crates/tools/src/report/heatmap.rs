//! The bytes-exchanged heat map: one cell per (sender, receiver), darker for more bytes on a
//! logarithmic scale, so a centralised master's row and column stand out against DRQS's spread.

use canopy_distwalk::ClusterStats;
use plotters::prelude::*;
use std::path::Path;

pub fn draw(stats: &ClusterStats, path: &Path) -> Result<(), String> {
    let last_rank = stats.ranks.len().saturating_sub(1);
    let max = stats.ranks.iter().flat_map(|r| r.bytes_to.iter().copied()).max().unwrap_or(0).max(1);
    let shade = |bytes: u64| -> RGBColor {
        if bytes == 0 {
            return WHITE;
        }
        // log scale from 1 byte (pale) to the maximum (dark blue).
        let t = ((bytes as f64).ln() / (max as f64).ln().max(1e-9)).clamp(0.0, 1.0);
        let mix = |from: f64, to: f64| (from + (to - from) * t) as u8;
        RGBColor(mix(222.0, 8.0), mix(235.0, 48.0), mix(247.0, 107.0))
    };
    let root = SVGBackend::new(path, (760, 680)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let (chart_area, legend_area) = root.split_horizontally(640);
    let title = format!("bytes sent between ranks — {} ({} B total)", stats.scheduler, stats.total_bytes());
    let mut chart = ChartBuilder::on(&chart_area)
        .caption(title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(50)
        .build_cartesian_2d((0..last_rank).into_segmented(), (0..last_rank).into_segmented())
        .map_err(|e| e.to_string())?;
    chart
        .configure_mesh()
        .disable_mesh()
        .x_desc("receiver rank")
        .y_desc("sender rank")
        .x_labels(last_rank.min(15) + 1)
        .y_labels(last_rank.min(15) + 1)
        .draw()
        .map_err(|e| e.to_string())?;
    let cells = stats.ranks.iter().flat_map(|r| {
        r.bytes_to.iter().enumerate().map(move |(to, &bytes)| {
            let from = r.rank as usize;
            let corner = |x, y| (SegmentValue::Exact(x), SegmentValue::Exact(y));
            Rectangle::new([corner(to, from), corner(to + 1, from + 1)], shade(bytes).filled())
        })
    });
    chart.draw_series(cells).map_err(|e| e.to_string())?;
    draw_legend(&legend_area, max, &shade)?;
    root.present().map_err(|e| e.to_string())
}

fn draw_legend(
    area: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
    max: u64,
    shade: &dyn Fn(u64) -> RGBColor,
) -> Result<(), String> {
    let steps = 20u32;
    for i in 0..steps {
        let bytes = (max as f64).powf(f64::from(i + 1) / f64::from(steps)) as u64;
        let top = 560 - (i as i32 + 1) * 24;
        area.draw(&Rectangle::new([(20, top), (50, top + 24)], shade(bytes).filled()))
            .map_err(|e| e.to_string())?;
    }
    let label = |y: i32, text: String| area.draw(&Text::new(text, (56, y), ("sans-serif", 13)));
    label(76, format!("{max} B")).map_err(|e| e.to_string())?;
    label(548, "1 B".to_string()).map_err(|e| e.to_string())?;
    label(590, "white: none".to_string()).map_err(|e| e.to_string())?;
    Ok(())
}
