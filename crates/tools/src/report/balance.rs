//! The work-distribution chart: entries visited per rank, with the max/min ratios in the title —
//! the seed's Fig. 6, where H-DRQS stays within a few per cent — and below it the work requests
//! each rank sent, pale, with the fruitful ones dark over them. Above [`super::MAX_CELLS`] ranks a
//! bar is a block of consecutive ranks: its mean entries per rank and its requests summed.

use super::block_of;
use canopy_distwalk::ClusterStats;
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::Path;

pub fn draw(stats: &ClusterStats, path: &Path) -> Result<(), String> {
    let block = block_of(stats.ranks.len());
    let mut entries = vec![(0u64, 0u64); block.count];
    let mut requests = vec![(0u64, 0u64); block.count];
    for rank in &stats.ranks {
        let b = block.of(rank.rank);
        entries[b].0 += rank.entries;
        entries[b].1 += 1;
        requests[b].0 += rank.work_requests_sent;
        requests[b].1 += rank.work_requests_fruitful;
    }
    let mean_entries: Vec<u64> = entries.iter().map(|&(sum, ranks)| sum / ranks.max(1)).collect();
    let root = SVGBackend::new(path, (760, 700)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let (top, bottom) = root.split_vertically(420);
    let mut title = format!(
        "entries per rank — {} (max/min: entries {:.3}, tasks {:.3}){}",
        stats.scheduler,
        stats.imbalance(|r| r.entries),
        stats.imbalance(|r| r.tasks),
        block.describe()
    );
    if stats.workers().len() < stats.ranks.len() {
        title.push_str(", master left out");
    }
    let x_desc = if block.size == 1 { "rank" } else { "block of ranks" };
    let y_desc = if block.size == 1 { "entries visited" } else { "entries visited per rank" };
    bars(&top, &title, x_desc, y_desc, &[(&mean_entries, RGBColor(49, 130, 189))])?;
    let sent: Vec<u64> = requests.iter().map(|r| r.0).collect();
    let fruitful: Vec<u64> = requests.iter().map(|r| r.1).collect();
    let (asked, got) = (sent.iter().sum::<u64>(), fruitful.iter().sum::<u64>());
    let title = format!("work requests sent ({asked}, pale) and fruitful ({got}, dark)");
    bars(
        &bottom,
        &title,
        x_desc,
        "work requests",
        &[(&sent, RGBColor(189, 215, 238)), (&fruitful, RGBColor(8, 81, 156))],
    )?;
    root.present().map_err(|e| e.to_string())
}

/// Bar series drawn over each other in order, one bar per block.
fn bars(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    title: &str,
    x_desc: &str,
    y_desc: &str,
    series: &[(&Vec<u64>, RGBColor)],
) -> Result<(), String> {
    let count = series.first().map_or(1, |(values, _)| values.len()).max(1) as u32;
    let max = series.iter().flat_map(|(values, _)| values.iter().copied()).max().unwrap_or(0).max(1);
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 16))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d((0..count - 1).into_segmented(), 0u64..max + max / 10)
        .map_err(|e| e.to_string())?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
        .draw()
        .map_err(|e| e.to_string())?;
    for (values, color) in series {
        let histogram = Histogram::vertical(&chart)
            .style(color.filled())
            .margin(if count > 64 { 0 } else { 6 })
            .data(values.iter().enumerate().map(|(i, &v)| (i as u32, v)));
        chart.draw_series(histogram).map_err(|e| e.to_string())?;
    }
    Ok(())
}
